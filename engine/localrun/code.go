package localrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/stepcode"
)

// CodeFromArtifacts takes the code objects of an in-process compile.
func CodeFromArtifacts(arts []compiler.Artifact) []Code {
	var out []Code
	for _, a := range arts {
		if a.Data == nil {
			continue
		}
		out = append(out, Code{URI: a.S3URI, Data: a.Data})
	}
	return out
}

// codeURI is a content-addressed code key: s3://<bucket>/<pipeline>/code/<sha256>/<name>.
var codeURI = regexp.MustCompile(`^s3://[^/]+/.+/code/([0-9a-f]{64}|missing)/(.+)$`)

// CodeFromManifest rebuilds every code object a manifest (local source →
// S3 URI, as the compile report returns it) lists: "builtin:" sources
// from the built-in code, the others from read (the call's files over the
// workspace); each is checked against its content address.
func CodeFromManifest(ctx context.Context, manifest map[string]string, read fs.FS) ([]Code, error) {
	keys := make([]string, 0, len(manifest))
	for k := range manifest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type folderFile struct{ key, uri, rel string }
	folders := map[string][]folderFile{} // digest → files of an input folder
	var out []Code
	var runprocs []string
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		uri := manifest[key]
		m := codeURI.FindStringSubmatch(uri)
		if m == nil {
			return nil, &InputError{Field: "manifest." + key, Reason: fmt.Sprintf("%q is not a content-addressed code URI (s3://<bucket>/<pipeline>/code/<sha256>/<file>)", uri)}
		}
		digest, name := m[1], m[2]
		if digest == "missing" {
			return nil, &InputError{Field: "manifest." + key, Reason: "is a code artifact the compile did not find (code/missing/): send its source in files and compile again"}
		}
		local := manifestLocal(key)
		if strings.HasPrefix(local, "generated:") {
			runprocs = append(runprocs, key)
			continue
		}
		fsys, p := sourceOf(local, read)
		if fsys == nil {
			return nil, &InputError{Field: "manifest." + key, Reason: "has no local source to read the code from"}
		}
		var data []byte
		var missing bool
		var err error
		switch {
		case path.Base(name) == "sourcedir.tar.gz":
			st, serr := fs.Stat(fsys, p)
			if serr == nil && !st.IsDir() {
				data, missing, err = compiler.PackScript(fsys, p)
			} else {
				data, missing, err = compiler.PackSourceDir(ctx, fsys, p)
			}
		default:
			data, err = fs.ReadFile(fsys, p)
			missing = errors.Is(err, fs.ErrNotExist)
			if missing {
				err = nil
			}
		}
		if err != nil {
			return nil, &InputError{Field: "manifest." + key, Reason: fmt.Sprintf("cannot read its source: %v", err)}
		}
		if missing {
			return nil, &InputError{Field: "manifest." + key, Reason: fmt.Sprintf("names %s, which is not in the call's files, the workspace or the built-in code", local)}
		}
		if sha(data) != digest {
			if strings.Contains(name, "/") && path.Base(name) != "sourcedir.tar.gz" {
				// A file of an uploaded input folder: the digest is the folder's.
				folders[digest] = append(folders[digest], folderFile{key: key, uri: uri, rel: name[strings.Index(name, "/")+1:]})
				out = append(out, Code{URI: uri, Data: data})
				continue
			}
			return nil, &InputError{Field: "manifest." + key, Reason: fmt.Sprintf("%s does not match its content address %s: it changed since the compile, or the compile packed it with the config's hyperparameters. Send dag and config (compiled in the same call) instead of definition and manifest", local, digest[:12])}
		}
		out = append(out, Code{URI: uri, Data: data})
	}
	byURI := map[string][]byte{}
	for _, c := range out {
		byURI[c.URI] = c.Data
	}
	for digest, files := range folders {
		set := map[string][]byte{}
		for _, f := range files {
			set[f.rel] = byURI[f.uri]
		}
		if compiler.DirDigest(set) != digest {
			return nil, &InputError{Field: "manifest." + files[0].key, Reason: "the files of this input folder do not match its content address: they changed since the compile"}
		}
	}
	// A generated runproc.sh runs one script of its step's source
	// directory: find which by its content address.
	for _, key := range runprocs {
		uri := manifest[key]
		digest := codeURI.FindStringSubmatch(uri)[1]
		var found []byte
		for _, c := range out {
			if path.Base(c.URI) != "sourcedir.tar.gz" {
				continue
			}
			for _, entry := range tarEntries(c.Data) {
				if b := compiler.RunProc(entry); sha(b) == digest {
					found = b
				}
			}
		}
		if found == nil {
			return nil, &InputError{Field: "manifest." + key, Reason: "is a generated runproc.sh that runs no script of the manifest's source directories"}
		}
		out = append(out, Code{URI: uri, Data: found})
	}
	return out, nil
}

// manifestLocal is a manifest key without its "@steps" and "#kind"
// suffixes.
func manifestLocal(key string) string {
	if i := strings.LastIndex(key, "#"); i > 0 {
		key = key[:i]
	}
	if i := strings.LastIndex(key, "@"); i > 0 {
		key = key[:i]
	}
	return key
}

// sourceOf is the file system and path a manifest local reads.
func sourceOf(local string, read fs.FS) (fs.FS, string) {
	if p, ok := strings.CutPrefix(local, "builtin:"); ok {
		return stepcode.FS, path.Clean(p)
	}
	if read == nil {
		return nil, ""
	}
	return read, path.Clean(strings.TrimPrefix(local, "./"))
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkCode makes sure every code object the definition points at is
// there: a definition whose manifest lacks one cannot run.
func checkCode(def *definition, code []Code) error {
	have := map[string]bool{}
	var prefixes []string
	for _, c := range code {
		have[c.URI] = true
		if m := codeURI.FindStringSubmatch(c.URI); m != nil {
			prefixes = append(prefixes, c.URI[:len(c.URI)-len(m[2])])
		}
	}
	for _, s := range def.Steps {
		for _, uri := range codeRefs(s.Arguments) {
			if have[uri] {
				continue
			}
			covered := false
			for _, p := range prefixes {
				if strings.HasPrefix(uri, p) && strings.HasSuffix(uri, "/") {
					covered = true
				}
			}
			if !covered {
				return &InputError{Field: "manifest", Reason: fmt.Sprintf("does not list %s, which step %s runs: send the manifest the compile report returned with this definition", uri, s.Name)}
			}
		}
	}
	return nil
}

// codeRefs lists the content-addressed code URIs in v (JSON-encoded
// hyperparameter strings included).
func codeRefs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case string:
			s := strings.Trim(t, `"`)
			if m := codeURI.FindStringSubmatch(s); m != nil && m[1] != "missing" {
				out = append(out, s)
			}
		}
	}
	walk(v)
	return out
}

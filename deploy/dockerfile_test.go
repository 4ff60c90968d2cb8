package deploy

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/server"
)

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	Cmd  string // upper case: FROM, RUN, …
	Args string
	Line int
}

// stage is the instructions from one FROM to the next.
type stage struct {
	From  instruction
	Image string
	Name  string
	Body  []instruction
}

func parseDockerfile(t *testing.T, data []byte) []stage {
	t.Helper()
	var ins []instruction
	sc := bufio.NewScanner(bytes.NewReader(data))
	var cur strings.Builder
	start, n := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		ins = append(ins, instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start})
		cur.Reset()
	}
	if cur.Len() != 0 {
		t.Fatalf("Dockerfile ends inside a line continuation (line %d)", start)
	}
	var stages []stage
	for _, in := range ins {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			st := stage{From: in, Image: f[len(f)-1]}
			for i, w := range f {
				if w == "--platform" || strings.HasPrefix(w, "--") {
					continue
				}
				st.Image = w
				if i+2 < len(f) && strings.EqualFold(f[i+1], "AS") {
					st.Name = f[i+2]
				}
				break
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				t.Fatalf("Dockerfile line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			continue
		}
		stages[len(stages)-1].Body = append(stages[len(stages)-1].Body, in)
	}
	return stages
}

func find(st stage, cmd string) []instruction {
	var out []instruction
	for _, in := range st.Body {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// dockerfileProblems lists every way the Dockerfile breaks the image
// invariants: static binary built by scripts/build.sh, distroless nonroot
// runtime without a shell, fixed entrypoint and port, no HEALTHCHECK.
func dockerfileProblems(stages []stage) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(stages) < 2 {
		return []string{fmt.Sprintf("%d stage(s), want a build stage and a runtime stage", len(stages))}
	}
	build, runtime := stages[0], stages[len(stages)-1]

	if build.Name == "" {
		bad("first stage (line %d) has no name for the runtime stage to copy from", build.From.Line)
	}
	builds := false
	for _, in := range find(build, "RUN") {
		builds = builds || strings.Contains(in.Args, "scripts/build.sh /out/cursus")
	}
	if !builds {
		bad("build stage does not RUN `scripts/build.sh /out/cursus` (the command CI runs)")
	}

	if !strings.Contains(runtime.Image, "distroless/static") || !strings.HasSuffix(runtime.Image, ":nonroot") {
		bad("runtime image %q: want distroless static with the nonroot tag", runtime.Image)
	}
	for _, in := range find(runtime, "RUN") {
		bad("runtime stage line %d: RUN needs a shell, and the runtime image has none", in.Line)
	}
	for _, in := range find(runtime, "SHELL") {
		bad("runtime stage line %d: SHELL in a shell-less image", in.Line)
	}

	copied, workspace := false, false
	for _, in := range find(runtime, "COPY") {
		f := strings.Fields(in.Args)
		if len(f) >= 3 && f[0] == "--from="+build.Name && f[len(f)-2] == "/out/cursus" && f[len(f)-1] == "/cursus" {
			copied = true
		}
		if strings.Contains(in.Args, "--chown=65532:65532") && f[len(f)-1] == "/workspace" {
			workspace = true
		}
	}
	if !copied {
		bad("runtime stage does not COPY --from=%s /out/cursus /cursus", build.Name)
	}
	if !workspace {
		bad("runtime stage does not create /workspace owned by 65532 (with /tmp, the only place the server writes)")
	}
	if wd := find(runtime, "WORKDIR"); len(wd) == 0 || wd[len(wd)-1].Args != "/workspace" {
		bad("runtime WORKDIR is not /workspace")
	}

	// Numeric, so Kubernetes runAsNonRoot can check it without /etc/passwd.
	if users := find(runtime, "USER"); len(users) == 0 {
		bad("runtime stage has no USER: it would run as root")
	} else if last := users[len(users)-1].Args; last != "65532" && last != "65532:65532" {
		bad("USER %q: want 65532 or 65532:65532", last)
	}

	if exposes := find(runtime, "EXPOSE"); len(exposes) != 1 || strings.TrimSuffix(exposes[0].Args, "/tcp") != "8080" {
		bad("EXPOSE %v: want exactly 8080", exposes)
	}
	for _, st := range stages {
		for _, in := range find(st, "HEALTHCHECK") {
			bad("line %d: HEALTHCHECK (Kubernetes probes /healthz and /readyz instead)", in.Line)
		}
	}
	checkExec := func(cmd, want string) {
		ins := find(runtime, cmd)
		if len(ins) != 1 {
			bad("runtime stage has %d %s(s), want 1", len(ins), cmd)
			return
		}
		var argv []string
		if err := json.Unmarshal([]byte(ins[0].Args), &argv); err != nil {
			bad("line %d: %s is not exec form (a JSON array): %v", ins[0].Line, cmd, err)
			return
		}
		if got := strings.Join(argv, " "); got != want {
			bad("%s %q, want %q", cmd, got, want)
		}
	}
	checkExec("ENTRYPOINT", "/cursus serve --addr 0.0.0.0:8080")
	checkExec("CMD", "--config /etc/cursus/cursus.yaml")
	return problems
}

func TestDockerfileInvariants(t *testing.T) {
	for _, p := range dockerfileProblems(parseDockerfile(t, readRepoFile(t, "Dockerfile"))) {
		t.Error(p)
	}
}

// TestDockerfileChecksCatchViolations proves each check can fail.
func TestDockerfileChecksCatchViolations(t *testing.T) {
	bad := `FROM golang:1.26
RUN go build -o /out/cursus ./cmd/cursus
FROM debian:12
RUN apt-get update && \
    apt-get install -y curl
COPY /out/cursus /cursus
EXPOSE 8080 9090
HEALTHCHECK CMD curl -f http://localhost:8080/healthz
ENTRYPOINT /cursus serve
`
	problems := strings.Join(dockerfileProblems(parseDockerfile(t, []byte(bad))), "\n")
	for _, want := range []string{
		"has no name", "scripts/build.sh", "distroless static", "RUN needs a shell", "COPY --from",
		"/workspace owned by 65532", "WORKDIR", "no USER", "EXPOSE", "HEALTHCHECK",
		"ENTRYPOINT is not exec form", "0 CMD(s)",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("bad Dockerfile: no problem mentioning %q; got:\n%s", want, problems)
		}
	}
	if got := dockerfileProblems(parseDockerfile(t, []byte("FROM scratch\n"))); len(got) != 1 {
		t.Errorf("single-stage Dockerfile: got %q, want one problem", got)
	}
}

// TestImageDefaultConfig loads the config the image ships at
// /etc/cursus/cursus.yaml the way the server will.
func TestImageDefaultConfig(t *testing.T) {
	cfg, err := server.LoadConfig(filepath.Join(repoRoot(t), "deploy", "docker", "cursus.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Gates.EnableDestructive || cfg.Gates.AllowScriptExec {
		t.Error("image default config opens gates")
	}
	if cfg.Workspace.Root != "/workspace" {
		t.Errorf("workspace.root = %q, want /workspace (the writable mount)", cfg.Workspace.Root)
	}
	if cfg.Listen.Addr != "0.0.0.0:8080" {
		t.Errorf("listen.addr = %q, want 0.0.0.0:8080 to match EXPOSE", cfg.Listen.Addr)
	}
}

func noEnv(string) (string, bool) { return "", false }

// dockerignoreExcludes applies .dockerignore rules (last match wins, "!"
// re-includes, "**/" matches at any depth) to a context-relative path.
func dockerignoreExcludes(patterns []string, rel string) bool {
	excluded := false
	for _, p := range patterns {
		negate := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if matchesIgnore(p, rel) {
			excluded = !negate
		}
	}
	return excluded
}

func matchesIgnore(pattern, rel string) bool {
	pattern = strings.TrimPrefix(path.Clean(pattern), "/")
	// A pattern matches the path itself or any parent directory.
	for p := rel; p != "." && p != "/"; p = path.Dir(p) {
		if ok, _ := path.Match(pattern, p); ok {
			return true
		}
		if rest, ok := strings.CutPrefix(pattern, "**/"); ok {
			for q := p; ; {
				if m, _ := path.Match(rest, q); m {
					return true
				}
				_, after, found := strings.Cut(q, "/")
				if !found {
					break
				}
				q = after
			}
		}
	}
	return false
}

func TestDockerignore(t *testing.T) {
	var patterns []string
	for _, line := range strings.Split(string(readRepoFile(t, ".dockerignore")), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	needed := []string{"go.mod", "go.sum", "scripts/build.sh", "cmd/cursus/main.go", "assets.go",
		"openapi.yaml", "server/config.go", "engine/steps/catalog.go", "deploy/docker/cursus.yaml"}
	for _, p := range needed {
		if dockerignoreExcludes(patterns, p) {
			t.Errorf(".dockerignore excludes %s, which the build stage needs", p)
		}
	}
	unwanted := []string{".git/config", "helm/cursus-mcp/values.yaml", "interop/node_modules/x/index.js", "deploy/cursus.yaml"}
	for _, p := range unwanted {
		if !dockerignoreExcludes(patterns, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
}

// TestBuildScriptBinary runs the build command the Dockerfile runs and
// checks the result is static and carries its version.
func TestBuildScriptBinary(t *testing.T) {
	bin := cursusBinary(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "cursus "+testVersion {
		t.Errorf("cursus version printed %q, want %q (VERSION → -ldflags -X)", got, "cursus "+testVersion)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("binary is not ELF: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has a dynamic loader (PT_INTERP): not static, it would not run on distroless static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary links shared libraries %v", libs)
	}
}

// Package stepcode holds the built-in code of the built-in step types: for
// each step type with a script, a complete source folder code/<snake>/ (the
// catalog file's stem) holding the contract's entry point at its top, any
// helper modules, and requirements.txt where the framework image lacks a
// package. The compiler packs it when a caller sends no code of its own; the
// steps.code tool serves it so an agent can read and adapt it. Files whose
// names start with "." or "_" are not embedded (no __pycache__).
package stepcode

import (
	"embed"
	"io/fs"
	"sort"

	"github.com/cursus-dev/cursus/engine/steps"
)

//go:embed code
var embedded embed.FS

// FS is the built-in code tree, rooted at code/: FS holds
// tabular_preprocessing/tabular_preprocessing.py, xgboost_training/…, and so on.
var FS fs.FS = mustSub(embedded, "code")

func mustSub(f embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directive above embeds dir: unreachable
	}
	return sub
}

// sharedFolders names step types served by another step type's folder: a
// tuning step runs its training script.
var sharedFolders = map[string]string{
	"XGBoostTuning":  "xgboost_training",
	"LightGBMTuning": "lightgbm_training",
	"PyTorchTuning":  "pytorch_training",
}

// Dir returns the folder in FS that holds stepType's code (XGBoostTraining →
// xgboost_training, XGBoostTuning → xgboost_training) and whether there is one.
// Step types without a script (BatchTransform, Registration) and caller step
// types have none.
func Dir(stepType string) (string, bool) {
	dir, ok := sharedFolders[stepType]
	if !ok {
		dir = steps.ConventionStem(stepType)
	}
	if dir == "" || !fs.ValidPath(dir) || dir == "." {
		return "", false
	}
	if info, err := fs.Stat(FS, dir); err != nil || !info.IsDir() {
		return "", false
	}
	return dir, true
}

// File is one file of a built-in code folder.
type File struct {
	Path string `json:"path"` // relative to the folder
	Text string `json:"text"`
}

// Files lists the files under dir in FS (a folder Dir returned), with paths
// relative to it, sorted.
func Files(dir string) ([]File, error) {
	var out []File
	err := fs.WalkDir(FS, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS, p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: p[len(dir)+1:], Text: string(b)})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

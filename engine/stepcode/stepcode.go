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
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/steps"
)

//go:embed code
var embedded embed.FS

// FS is the built-in code tree as SageMaker gets it, rooted at code/: FS
// holds tabular_preprocessing/tabular_preprocessing.py, xgboost_training/…,
// and so on, each folder complete with the shared modules it imports.
var FS fs.FS = compose(mustSub(embedded, "code"), includes())

func mustSub(f embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directive above embeds dir: unreachable
	}
	return sub
}

// includes maps a path in FS to the one file in the repository that
// stands there. SageMaker ships a step's own folder only, so every folder
// must carry the modules it imports; the repository keeps one copy (in
// common/, or in the folder that serves it) and FS lays it into each
// folder. The three frameworks' eval and batch-inference scripts are one
// script each, since each scores through its own folder's inference.py.
func includes() map[string]string {
	m := map[string]string{}
	into := func(file string, dirs ...string) {
		for _, dir := range dirs {
			m[path.Join(dir, path.Base(file))] = file
		}
	}
	for _, fw := range []string{"xgboost", "lightgbm", "pytorch"} {
		into("common/tabular_features.py", fw+"_training", fw+"_model", fw+"_model_eval", fw+"_model_inference")
		// Training, evaluation and batch inference score through the
		// serving handler, so evaluation measures what the endpoint serves.
		into(fw+"_model/inference.py", fw+"_training", fw+"_model_eval", fw+"_model_inference")
		m[fw+"_model_eval/"+fw+"_model_eval.py"] = "common/model_eval.py"
		m[fw+"_model_inference/"+fw+"_model_inference.py"] = "common/model_inference.py"
	}
	into("lightgbm_model/requirements.txt", "lightgbm_training", "lightgbm_model_eval", "lightgbm_model_inference")
	return m
}

// commonDir holds modules that belong to no one folder; it is not a step
// type's folder, so FS leaves it out.
const commonDir = "common"

// compose returns src's folders (common/ left out) with each include
// laid at its path. The tree is small and read often, so it is built once,
// in memory.
func compose(src fs.FS, incs map[string]string) fs.FS {
	out := fstest.MapFS{}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, commonDir+"/") {
			return err
		}
		b, err := fs.ReadFile(src, p)
		out[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	for at, file := range incs {
		b, rerr := fs.ReadFile(src, file)
		err = errors.Join(err, rerr)
		out[at] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	if err != nil {
		panic(err) // the embedded tree and the table above disagree: a test catches it
	}
	return out
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

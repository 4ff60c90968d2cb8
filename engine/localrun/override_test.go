package localrun

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/compiler"
)

// callerPrep is a caller's own TabularPreprocessing: the built-in data's
// rows split by position into train/val/test, as the built-in training
// reads them.
const callerPrep = `"""A caller's preprocessing: split the rows by position."""
import glob, os
rows = []
header = None
for p in sorted(glob.glob("/opt/ml/processing/input/data/**/*.csv", recursive=True)):
    with open(p) as f:
        lines = f.read().splitlines()
    header, rows = lines[0], rows + lines[1:]
for split, part in (("train", rows[0::3] + rows[1::3]), ("val", rows[2::6]), ("test", rows[5::6])):
    os.makedirs("/opt/ml/processing/output/" + split, exist_ok=True)
    with open("/opt/ml/processing/output/%s/%s_processed_data.csv" % (split, split), "w") as f:
        f.write("\n".join([header] + part) + "\n")
print("caller preprocessing wrote", len(rows), "rows")
`

// Acceptance (issue 35): a caller's script sent inline replaces the
// built-in one for its step, in the compile (its artifact is the caller's
// file) and in the run (the job runs it, and the built-in training
// downstream trains on what it wrote), from the definition and its
// manifest as compile.with_report returns them.
func TestCallerScriptReplacesBuiltinInCompileAndRun(t *testing.T) {
	needRuntime(t, "xgboost", "pandas", "sklearn")
	files := fstest.MapFS{"tabular_preprocessing.py": {Data: []byte(callerPrep)}}
	res := compileReadmeWay(t, sharedDAG(t, "xgboost_simple_training"), nil, files)
	manifest := res.Manifest()
	var callers, builtins int
	for local := range manifest {
		switch {
		case strings.HasPrefix(local, "tabular_preprocessing.py"):
			callers++
		case strings.HasPrefix(local, compiler.BuiltinPrefix):
			builtins++
		}
	}
	if callers != 1 || builtins == 0 {
		t.Fatalf("manifest %v: want the caller's script for TabularPreprocessing and built-in code for the rest", manifest)
	}
	code, err := CodeFromManifest(context.Background(), manifest, files)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := testRunner(t, Settings{}).Run(context.Background(), Request{Definition: res.JSON, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("first failure: %+v\n%s", rep.FirstFailure, logs(rep))
	}
	if tail := stepReport(t, rep, "TabularPreprocessing-Training").LogTail; !strings.Contains(tail, "caller preprocessing wrote 1500 rows") {
		t.Errorf("the preprocessing step did not run the caller's script: %q", tail)
	}
}

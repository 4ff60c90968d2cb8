package scriptrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/steps"
)

func needPython(t *testing.T) *Runner {
	t.Helper()
	r := NewRunner(2)
	if err := r.Available(); err != nil {
		// CI provisions python3: there its absence fails rather than
		// letting every sandbox test pass by skipping.
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 is required in CI: %v", err)
		}
		t.Skipf("python3 unavailable (set CI to make this a failure): %v", err)
	}
	return r
}

// writeScript writes src as the only file of a new directory.
func writeScript(t *testing.T, src string) Source {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toy_preprocessing.py"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return Source{FS: os.DirFS(dir), Path: "toy_preprocessing.py"}
}

const producingScript = `import os


def main(input_paths, output_paths, environ_vars, job_args):
    src = input_paths["input_data"]
    rows = []
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name)) as f:
            rows.extend(f.read().splitlines())
    out = output_paths["processed_data"]
    with open(os.path.join(out, "data.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
        f.write(environ_vars["LABEL_FIELD"] + "," + os.environ["TRAIN_RATIO"] + "," + job_args.job_type + "\n")
    # A hard-coded container path lands in the sandbox too.
    with open("/opt/ml/processing/output/literal.txt", "w") as f:
        f.write(os.getcwd())
    return {"rows": len(rows)}
`

func TestRunProducesContractOutputs(t *testing.T) {
	r := needPython(t)
	iface := mustInterface(t, prepInterface)
	samples := t.TempDir()
	if err := os.WriteFile(filepath.Join(samples, "train.csv"), []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, producingScript),
		SampleInputs: map[string]Source{"input_data": {FS: os.DirFS(samples), Path: "train.csv"}}, Env: map[string]string{"LABEL_FIELD": "y"},
		JobArgs: map[string]string{"job_type": "validation"}, KeepSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(res.Sandbox)
	if !res.Success || res.TimedOut || len(res.MissingOutputs) != 0 {
		t.Fatalf("run failed: %+v", res)
	}
	if len(res.Outputs) != 1 || !res.Outputs[0].Produced || strings.Join(res.Outputs[0].Files, ",") != "data.csv,literal.txt" {
		t.Fatalf("outputs = %+v", res.Outputs)
	}
	data, err := os.ReadFile(filepath.Join(res.Outputs[0].Dir, "data.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "a,b\n1,2\ny,0.7,validation\n" {
		t.Errorf("data.csv = %q", data)
	}
	cwd, _ := os.ReadFile(filepath.Join(res.Outputs[0].Dir, "literal.txt"))
	if !strings.HasPrefix(string(cwd), res.Sandbox) {
		t.Errorf("script cwd %q is not inside the sandbox %q", cwd, res.Sandbox)
	}
	if res.Result != `{"rows": 2}` {
		t.Errorf("main result = %q", res.Result)
	}
}

func TestRunReportsMissingOutput(t *testing.T) {
	r := needPython(t)
	iface := mustInterface(t, prepInterface)
	script := "def main(input_paths, output_paths, environ_vars, job_args):\n    return None\n"
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, script)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || strings.Join(res.MissingOutputs, ",") != "processed_data" || res.ExitCode != 0 {
		t.Errorf("want a clean exit with processed_data missing, got %+v", res)
	}
}

func TestRunKillsAnInfiniteLoop(t *testing.T) {
	r := needPython(t)
	iface := mustInterface(t, prepInterface)
	script := "import time\n\ndef main(input_paths, output_paths, environ_vars, job_args):\n    while True:\n        time.sleep(0.01)\n"
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, script),
		Limits: Limits{Timeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Success || !strings.Contains(res.ErrorMessage, "time limit") {
		t.Errorf("want a timed-out failure, got %+v", res)
	}
}

func TestRunCannotWriteOutsideTheSandbox(t *testing.T) {
	r := needPython(t)
	iface := mustInterface(t, prepInterface)
	outside := t.TempDir()
	victim := filepath.Join(outside, "escaped.txt")
	script := `import os, subprocess, shutil


def attempt(label, fn):
    try:
        fn()
        print(label, "ALLOWED")
    except PermissionError as e:
        print(label, "DENIED", e)


def main(input_paths, output_paths, environ_vars, job_args):
    attempt("open", lambda: open(` + "`" + `VICTIM` + "`" + `, "w").write("x"))
    attempt("os.open", lambda: os.open(` + "`" + `VICTIM` + "`" + `, os.O_WRONLY | os.O_CREAT))
    attempt("relative", lambda: open("../../../../../../../.." + ` + "`" + `VICTIM` + "`" + `, "w"))
    attempt("mkdir", lambda: os.mkdir(` + "`" + `VICTIM` + "`" + ` + ".d"))
    attempt("subprocess", lambda: subprocess.run(["touch", ` + "`" + `VICTIM` + "`" + `]))
    attempt("system", lambda: os.system("touch " + ` + "`" + `VICTIM` + "`" + `))
    open(os.path.join(output_paths["processed_data"], "ok.txt"), "w").write("inside")
`
	script = strings.ReplaceAll(script, "`VICTIM`", "'"+victim+"'")
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, script)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Fatalf("run failed: %+v", res)
	}
	for _, label := range []string{"open", "os.open", "relative", "mkdir", "subprocess", "system"} {
		if !strings.Contains(res.Stdout, label+" DENIED") {
			t.Errorf("%s was not denied; stdout:\n%s", label, res.Stdout)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Errorf("the script wrote outside its sandbox: %v", entries)
	}
}

func TestRunEnvironmentIsNotInherited(t *testing.T) {
	r := needPython(t)
	t.Setenv("CURSUS_TEST_SECRET", "leak")
	iface := mustInterface(t, prepInterface)
	script := "import os\n\ndef main(input_paths, output_paths, environ_vars, job_args):\n    open(output_paths['processed_data'] + '/env.txt', 'w').write(os.environ.get('CURSUS_TEST_SECRET', 'absent') + ' ' + os.environ['HOME'])\n"
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, script), KeepSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(res.Sandbox)
	got, _ := os.ReadFile(filepath.Join(res.Outputs[0].Dir, "env.txt"))
	if !strings.HasPrefix(string(got), "absent "+res.Sandbox) {
		t.Errorf("env.txt = %q", got)
	}
}

func TestRunOutputIsCapped(t *testing.T) {
	r := needPython(t)
	iface := mustInterface(t, prepInterface)
	script := "def main(input_paths, output_paths, environ_vars, job_args):\n    print('x' * 100000)\n    open(output_paths['processed_data'] + '/o', 'w').write('1')\n"
	res, err := r.Run(context.Background(), RunRequest{Interface: iface, Script: writeScript(t, script), Limits: Limits{MaxOutputBytes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutputTruncated || len(res.Stdout) > 1000 {
		t.Errorf("stdout not capped: truncated=%v len=%d", res.OutputTruncated, len(res.Stdout))
	}
}

func TestRunRuntimeUnavailable(t *testing.T) {
	r := NewRunner(1)
	r.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	_, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface), Script: Source{FS: os.DirFS(t.TempDir()), Path: "nonexistent.py"}})
	if !errors.Is(err, ErrRuntimeUnavailable) {
		t.Errorf("err = %v, want ErrRuntimeUnavailable", err)
	}
}

func TestRunWaitsForASlotAndHonoursCancellation(t *testing.T) {
	r := needPython(t)
	r.sem <- struct{}{}
	r.sem <- struct{}{} // both slots taken
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Run(ctx, RunRequest{Interface: mustInterface(t, prepInterface), Script: writeScript(t, goodScript)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled while the cap is reached", err)
	}
}

func TestRunRejectsUnknownSampleInput(t *testing.T) {
	r := needPython(t)
	sample := writeScript(t, "1")
	_, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface), Script: writeScript(t, goodScript),
		SampleInputs: map[string]Source{"nope": sample}})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("err = %v", err)
	}
}

// A script starts with the contract defaults under the caller's values,
// the contract's flags in contract order (job_type defaulting to training)
// and then any other flags in name order.
func TestInvocation(t *testing.T) {
	var c steps.Contract
	c.EnvVars.Optional.Set("TRAIN_RATIO", "0.7")
	c.EnvVars.Optional.Set("OUTPUT_FORMAT", "CSV")
	c.JobArguments = []steps.JobArgument{{Flag: "--job_type", Source: "job_type"}, {Flag: "--mode", Source: "mode"}}
	env, args, argv := Invocation(c, map[string]string{"OUTPUT_FORMAT": "parquet", "LABEL_FIELD": "y"},
		map[string]string{"zeta": "1", "alpha": "2", "mode": "fast"})
	if want := map[string]string{"TRAIN_RATIO": "0.7", "OUTPUT_FORMAT": "parquet", "LABEL_FIELD": "y"}; !reflect.DeepEqual(env, want) {
		t.Errorf("env = %v", env)
	}
	if want := []string{"--job_type", "training", "--mode", "fast", "--alpha", "2", "--zeta", "1"}; !reflect.DeepEqual(argv, want) {
		t.Errorf("argv = %q", argv)
	}
	if args["job_type"] != "training" || len(args) != 4 {
		t.Errorf("job args = %v", args)
	}
}

// A run that fails before it answers removes its sandbox even when asked
// to keep it: the caller never learns the path to remove.
func TestRunThatFailsLeavesNoSandbox(t *testing.T) {
	r := needPython(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // after needPython: the probe has run
	big := writeScript(t, strings.Repeat("x", 100))
	big.MaxFileBytes = 10
	_, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface), Script: writeScript(t, goodScript),
		SampleInputs: map[string]Source{"input_data": big}, KeepSandbox: true})
	var ce *CopyError
	if !errors.As(err, &ce) || ce.Limit != 10 {
		t.Fatalf("err = %v, want a *CopyError at the 10-byte cap", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the failed run left %v in TMPDIR", left)
	}
}

// Listing a script's outputs stops when the call's context ends: a script
// may leave any number of files behind.
func TestCollectOutputsStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.csv", "b.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	iface := &steps.Interface{}
	iface.Contract.Outputs.Set("processed_data", steps.OutputPort{Path: "/opt/ml/processing/output"})
	outDirs := map[string]string{"processed_data": dir}
	products, _ := collectOutputs(context.Background(), iface, outDirs, false)
	if len(products) != 1 || len(products[0].Files) != 2 {
		t.Fatalf("live context: products %+v", products)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if products, _ := collectOutputs(ctx, iface, outDirs, false); len(products) != 1 || len(products[0].Files) != 0 {
		t.Fatalf("cancelled context: products %+v, want the walk stopped before any file", products)
	}
}

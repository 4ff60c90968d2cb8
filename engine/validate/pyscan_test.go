package validate

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const sampleScript = `#!/usr/bin/env python
"""Tabular preprocessing.

Reads os.environ["NOT_A_READ"] only inside this docstring.
"""
import argparse
import os
from os import getenv

INPUT_DIR = "/opt/ml/processing/input/data"  # os.getenv("IN_COMMENT")
HELP = '''triple with "quotes" and /opt/ml/not_a_path_start
   spanning lines'''
LABEL = os.environ.get("LABEL_FIELD", "label")
FSTR = f"{INPUT_DIR}/part"
OUT = f"/opt/ml/processing/output/{LABEL}/x"
NESTED = f"{ {'a': 1}['a'] } and {os.getenv('FROM_FSTRING')}"
total = 1 + \
    2


def helper(x):
    return x * 2


def main(input_paths, output_paths, environ_vars, job_args):
    data_dir = input_paths["input_data"]
    sig = input_paths.get("signature")
    out = output_paths["processed_data"]
    split = float(environ_vars.get("TRAIN_RATIO", 0.7))
    region = os.getenv("REGION")
    strict = os.environ["STRICT_MODE"]
    jt = job_args.job_type
    if (split > 0 and
            region):
        pass
    return {"out": out}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", type=str, required=True)
    parser.add_argument("-m", "--mode-name", default="x")
    args = parser.parse_args()
    environ_vars = {
        "TRAIN_RATIO": os.environ.get("TRAIN_RATIO"),
        "LABEL_FIELD": getenv("LABEL_FIELD"),
    }
    main({"input_data": INPUT_DIR}, {"processed_data": "/opt/ml/processing/output"}, environ_vars, args)
`

func TestAnalyzeScriptExtractsReads(t *testing.T) {
	a, err := AnalyzeScript(context.Background(), "prep.py", []byte(sampleScript))
	if err != nil {
		t.Fatalf("AnalyzeScript: %v", err)
	}
	if a.Main == nil || a.Main.Line != 25 || !a.Main.HasExpectedSignature() {
		t.Fatalf("main = %+v, want line 25 with the four parameters", a.Main)
	}

	type read struct {
		Name      string
		Line      int
		Form      string
		Default   bool
		Harvested bool
	}
	var got []read
	for _, r := range a.EnvReads {
		got = append(got, read{r.Name, r.Line, r.Form, r.HasDefault, r.Harvested})
	}
	want := []read{
		{"LABEL_FIELD", 13, "os.environ.get", true, false},
		{"REGION", 30, "os.getenv", false, false},
		{"STRICT_MODE", 31, "os.environ[]", false, false},
		{"TRAIN_RATIO", 45, "os.environ.get", false, true},
		{"LABEL_FIELD", 46, "os.getenv", false, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("env reads:\n got %+v\nwant %+v", got, want)
	}
	if names := a.EnvNames(); !reflect.DeepEqual(names, []string{"LABEL_FIELD", "REGION", "STRICT_MODE", "TRAIN_RATIO"}) {
		t.Errorf("EnvNames = %v", names)
	}
	if !reflect.DeepEqual(a.InputNames, []NameUse{{"input_data", 26}, {"signature", 27}}) {
		t.Errorf("input names = %+v", a.InputNames)
	}
	if !reflect.DeepEqual(a.OutputNames, []NameUse{{"processed_data", 28}}) {
		t.Errorf("output names = %+v", a.OutputNames)
	}
	if !reflect.DeepEqual(a.EnvironNames, []NameUse{{"TRAIN_RATIO", 29}}) {
		t.Errorf("environ_vars names = %+v", a.EnvironNames)
	}
	if !reflect.DeepEqual(a.JobArgReads, []NameUse{{"job_type", 32}}) {
		t.Errorf("job_args reads = %+v", a.JobArgReads)
	}
	if !a.UsesArgparse || a.DynamicArguments {
		t.Errorf("argparse flags: uses=%v dynamic=%v", a.UsesArgparse, a.DynamicArguments)
	}
	wantArgs := []ArgDecl{{Flags: []string{"--job_type"}, Line: 41}, {Flags: []string{"-m", "--mode-name"}, Line: 42}}
	if !reflect.DeepEqual(a.Arguments, wantArgs) {
		t.Errorf("arguments = %+v", a.Arguments)
	}
	if !a.HasFlag("job-type") || !a.HasFlag("--mode_name") || a.HasFlag("--other") {
		t.Errorf("HasFlag normalisation is wrong")
	}
	wantPaths := []PathLiteral{
		{"/opt/ml/processing/input/data", 10},
		{"/opt/ml/processing/output/", 15},
		{"/opt/ml/processing/output", 48},
	}
	if !reflect.DeepEqual(a.ContainerPaths, wantPaths) {
		t.Errorf("container paths:\n got %+v\nwant %+v", a.ContainerPaths, wantPaths)
	}
}

func TestAnalyzeScriptNoMainAndOtherSignature(t *testing.T) {
	a, err := AnalyzeScript(context.Background(), "x.py", []byte("import os\nX = os.environ['A']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Main != nil {
		t.Errorf("found main in a script without one")
	}
	a, err = AnalyzeScript(context.Background(), "x.py", []byte("def main(args, out=None, *rest, **kw: int):\n    return args['x']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Main == nil || !reflect.DeepEqual(a.Main.Params, []string{"args", "out", "rest", "kw"}) || a.Main.HasExpectedSignature() {
		t.Errorf("main = %+v", a.Main)
	}
	// The first parameter takes the input role whatever it is called.
	if !reflect.DeepEqual(a.InputNames, []NameUse{{"x", 2}}) {
		t.Errorf("inputs via renamed parameter = %+v", a.InputNames)
	}
}

func TestAnalyzeScriptSyntaxErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int
		msg  string
	}{
		{"unterminated string", "x = 1\ny = 'abc\n", 2, "unterminated string literal"},
		{"unterminated triple", "x = 1\ny = \"\"\"abc\n\nz = 2\n", 2, "unterminated triple-quoted"},
		{"never closed", "x = [1,\n  2,\n", 1, "'[' was never closed"},
		{"mismatched", "x = (1,\n 2]\n", 2, "does not match"},
		{"unmatched close", "x = 1)\n", 1, "unmatched ')'"},
		{"missing colon", "def main(a, b)\n    return a\n", 1, "expected ':'"},
		{"no indented block", "if True:\nx = 1\n", 2, "expected an indented block"},
		{"unexpected indent", "x = 1\n    y = 2\n", 2, "unexpected indent"},
		{"bad dedent", "if x:\n        a = 1\n    b = 2\n", 3, "unindent does not match"},
		{"invalid char", "x = 1\ny = x $ 2\n", 2, "invalid character"},
		{"bad fstring brace", "x = f'a}b'\n", 1, "single '}'"},
		{"def without name", "def (x):\n    pass\n", 1, "followed by a name"},
		{"eof after colon", "for x in y:\n", 1, "expected an indented block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := AnalyzeScript(context.Background(), "bad.py", []byte(c.src))
			var se *ScriptAnalysisError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *ScriptAnalysisError", err)
			}
			if se.Line != c.line || !strings.Contains(se.Message, c.msg) || se.File != "bad.py" {
				t.Errorf("got %q at line %d, want %q at line %d", se.Message, se.Line, c.msg, c.line)
			}
		})
	}
}

func TestAnalyzeScriptValidEdgeCases(t *testing.T) {
	src := strings.Join([]string{
		"x = lambda a: a  # a lambda colon is not a block colon",
		"d = {'k': lambda: 1}",
		"s = r'\\'' + b\"\\x00\" + rb'raw'",
		"t = f\"{x!r:>{10}} {{literal}}\"",
		"u = '''a ''' ; v = \"\"\"\"quoted\" \"\"\"",
		"if x: y = 1",
		"class K(object):",
		"\tdef m(self):",
		"\t\treturn [i for i in (1, 2)",
		"\t\t        if i]",
		"w = 0x_ff + 1e-5 + 3j + 1_000.5",
		"async def co():",
		"    await x",
		"@decorator",
		"def f(): pass",
		"",
	}, "\n")
	a, err := AnalyzeScript(context.Background(), "ok.py", []byte(src))
	if err != nil {
		t.Fatalf("valid Python rejected: %v", err)
	}
	if a.Main != nil {
		t.Errorf("unexpected main")
	}
}

func FuzzAnalyzeScript(f *testing.F) {
	f.Add(sampleScript)
	f.Add("x = f'{a[\"b\"]}'\n")
	f.Fuzz(func(t *testing.T, src string) {
		a, err := AnalyzeScript(context.Background(), "f.py", []byte(src))
		if err == nil && a == nil {
			t.Fatal("nil analysis without error")
		}
	})
}

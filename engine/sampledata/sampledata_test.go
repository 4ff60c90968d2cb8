package sampledata

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTabularShape(t *testing.T) {
	recs, err := csv.NewReader(bytes.NewReader(Tabular())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{IDField, LabelField, "num_1", "num_2", "num_3", "num_4", "num_5", "num_6", "cat_1", "cat_2", "cat_3"}
	if got := strings.Join(recs[0], ","); got != strings.Join(want, ",") {
		t.Fatalf("header = %s, want %s", got, strings.Join(want, ","))
	}
	rows := recs[1:]
	if len(rows) < 1000 || len(rows) > 2000 {
		t.Fatalf("%d rows, want about 1,500", len(rows))
	}
	ids := map[string]bool{}
	positives, cells, empty := 0, 0, 0
	for i, r := range rows {
		if _, err := strconv.Atoi(r[0]); err != nil || ids[r[0]] {
			t.Fatalf("row %d: id %q not a unique int", i, r[0])
		}
		ids[r[0]] = true
		switch r[1] {
		case "1":
			positives++
		case "0":
		default:
			t.Fatalf("row %d: label %q not 0/1", i, r[1])
		}
		for j, v := range r[2:] {
			cells++
			if v == "" {
				empty++
				continue
			}
			if j < 6 {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					t.Fatalf("row %d: num_%d = %q not a float", i, j+1, v)
				}
			} else if _, err := strconv.ParseFloat(v, 64); err == nil {
				t.Fatalf("row %d: categorical cell %q looks numeric", i, v)
			}
		}
	}
	if share := float64(positives) / float64(len(rows)); share < 0.2 || share > 0.4 {
		t.Errorf("positives %.2f, want ~0.30", share)
	}
	if share := float64(empty) / float64(cells); share < 0.01 || share > 0.06 {
		t.Errorf("missing cells %.3f, want a few %%", share)
	}
}

func TestTabularReturnsACopy(t *testing.T) {
	a := Tabular()
	a[0] = 'X'
	if Tabular()[0] != 'i' {
		t.Fatal("Tabular shares its backing array with callers")
	}
}

// TestTabularLearnable checks the promise the local pipeline run relies on: a
// plain logistic regression on a held-out split reaches AUC > 0.8.
func TestTabularLearnable(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pandas, sklearn").Run(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("%s lacks pandas/sklearn (scripts/test.sh installs them; set CI to make this a failure): %v", py, err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "tabular.csv")
	if err := os.WriteFile(data, Tabular(), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.metrics import roc_auc_score
df = pd.read_csv(sys.argv[1]); y = df.pop("label"); df.pop("id")
X = pd.get_dummies(df, columns=["cat_1", "cat_2", "cat_3"]).fillna(0)
a, b, ya, yb = train_test_split(X, y, test_size=0.3, random_state=7, stratify=y)
m = LogisticRegression(max_iter=2000).fit(a, ya)
print(roc_auc_score(yb, m.predict_proba(b)[:, 1]))
`
	out, err := exec.Command(py, "-c", script, data).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	auc, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if auc <= 0.8 {
		t.Fatalf("held-out AUC %.3f, want > 0.8", auc)
	}
	t.Logf("held-out AUC %.3f", auc)
}

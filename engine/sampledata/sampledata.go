// Package sampledata holds the built-in sample data set every shared DAG can
// run on: a small tabular CSV with an id, a binary label, numeric and
// categorical columns and some missing values. It was generated once by
// generate.py (fixed seed) and is embedded as is.
package sampledata

import _ "embed"

// Column names of the id and the label in Tabular.
const (
	IDField    = "id"
	LabelField = "label"
)

//go:embed tabular.csv
var tabular []byte

// Tabular returns the sample CSV (header row, then 1,500 rows): id (unique
// int), label (0/1, ~30% positives), num_1..num_6 (floats) and cat_1..cat_3
// (short strings), ~3% of feature cells empty. The label follows the features
// closely enough that a simple model reaches AUC > 0.8 on a held-out split.
// The caller gets its own copy.
func Tabular() []byte { return append([]byte(nil), tabular...) }

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// project is an existing directory with files a new version replaces, a
// file of the user's (hard-linked over, so the same file), a symlink and
// a leftover temporary.
func project(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"proj/conf", "proj/notes/deep"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(dir, "proj/conf/dag.json"), "old dag")
	mustWrite(t, filepath.Join(dir, "proj/conf/config.json"), "old config")
	mustWrite(t, filepath.Join(dir, "proj/notes/deep/mine.txt"), "mine")
	mustWrite(t, filepath.Join(dir, "proj/conf/"+TempPrefix+"leftover"), "x")
	if err := os.Symlink("notes/deep/mine.txt", filepath.Join(dir, "proj/link")); err != nil {
		t.Fatal(err)
	}
}

func replaceProject(r *Root) error {
	s, err := r.StageReplace("proj")
	if err != nil {
		return err
	}
	if err := s.Keep([]string{"conf/dag.json", "conf/config.json"}); err != nil {
		s.Abort()
		return err
	}
	for _, f := range []string{"conf/dag.json", "conf/config.json"} {
		if err := s.WriteFile(f, []byte("new "+filepath.Base(f))); err != nil {
			s.Abort()
			return err
		}
	}
	return s.Commit()
}

func checkReplaced(t *testing.T, dir string, before os.FileInfo) {
	t.Helper()
	for f, want := range map[string]string{"conf/dag.json": "new dag.json", "conf/config.json": "new config.json", "link": "mine"} {
		if got, err := os.ReadFile(filepath.Join(dir, "proj", f)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", f, got, err, want)
		}
	}
	after, err := os.Stat(filepath.Join(dir, "proj/notes/deep/mine.txt"))
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("the user's file is not the same file after the replacement: %v", err)
	}
	if got := listAll(t, dir); slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, TempPrefix) }) {
		t.Errorf("temporaries left: %v", got)
	}
}

// StageReplace, Keep and Commit replace the files of a directory as one
// set and keep the rest, by RENAME_EXCHANGE and, on a file system without
// it, by two renames.
func TestStageReplaceSwapsTheSetAndKeepsTheRest(t *testing.T) {
	for _, noExchange := range []bool{false, true} {
		dir := t.TempDir()
		project(t, dir)
		before, err := os.Stat(filepath.Join(dir, "proj/notes/deep/mine.txt"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(dir, WithFaults(func(op, name string) error {
			if noExchange && op == "exchange" {
				return syscall.EINVAL
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if err := replaceProject(r); err != nil {
			t.Fatalf("without exchange %v: %v", noExchange, err)
		}
		checkReplaced(t, dir, before)
	}
}

// A failure anywhere before the swap leaves the directory as it was.
func TestStageReplaceFailureLeavesTheOldDirectory(t *testing.T) {
	for _, op := range []string{"create", "write", "sync", "exchange"} {
		dir := t.TempDir()
		project(t, dir)
		r, err := New(dir, WithFaults(func(got, name string) error {
			if got == op {
				return syscall.ENOSPC
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		var se *StorageError
		if err := replaceProject(r); !errors.As(err, &se) {
			t.Fatalf("%s: %v, want a StorageError", op, err)
		}
		for f, want := range map[string]string{"conf/dag.json": "old dag", "conf/config.json": "old config"} {
			if got, err := os.ReadFile(filepath.Join(dir, "proj", f)); err != nil || string(got) != want {
				t.Errorf("%s: %s is %q %v", op, f, got, err)
			}
		}
		if got := listAll(t, dir); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, TempPrefix) }) {
			t.Errorf("%s: temporaries left: %v", op, got)
		}
	}
}

// A symlink at a replaced path or on the way to one, a directory where a
// file goes, and a symlink as the directory itself are refused, as a
// WriteFile through them is.
func TestStageReplaceRefusesSymlinksOnTheSet(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	cases := map[string]func(){
		"symlink at a file": func() { _ = os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "proj/conf/dag.json")) },
		"symlink on the way": func() {
			_ = os.Symlink(outside, filepath.Join(dir, "proj/conf"))
		},
		"directory at a file": func() { _ = os.Mkdir(filepath.Join(dir, "proj/conf/dag.json"), 0o755) },
	}
	for name, setup := range cases {
		if err := os.RemoveAll(filepath.Join(dir, "proj")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "proj/conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "symlink on the way" {
			_ = os.Remove(filepath.Join(dir, "proj/conf"))
		}
		setup()
		err := replaceProject(r)
		var esc *EscapeError
		var fe *FileError
		if !errors.As(err, &esc) && !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("%s: wrote outside", name)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "proj")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "proj")); err != nil {
		t.Fatal(err)
	}
	var esc *EscapeError
	if _, err := r.StageReplace("proj"); !errors.As(err, &esc) {
		t.Fatalf("a symlinked directory: %v, want an EscapeError", err)
	}
}

// TestStageReplaceTakesTurns: a second replacement in the same directory
// waits until the first is committed, so its Keep never reads a version
// the first is removing (which lost the user's files under load in
// scaffold's TestKilledConcurrentOverwritesNeverMix). An abort releases
// the turn too.
func TestStageReplaceTakesTurns(t *testing.T) {
	dir := t.TempDir()
	project(t, dir)
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.StageReplace("proj")
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan *Staged)
	go func() {
		s, err := r.StageReplace("proj")
		if err != nil {
			t.Error(err)
		}
		second <- s
	}()
	// A second replacement that did not wait would be back at once; one
	// that waits is back only after the first commits.
	select {
	case s := <-second:
		s.Abort()
		t.Fatal("a second replacement was staged while the first was open")
	case <-time.After(200 * time.Millisecond):
	}
	if err := first.Keep([]string{"conf/dag.json"}); err != nil {
		t.Fatal(err)
	}
	if err := first.WriteFile("conf/dag.json", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	s := <-second
	if s == nil {
		t.FailNow()
	}
	if err := s.Keep(nil); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	third, err := r.StageReplace("proj")
	if err != nil {
		t.Fatal(err)
	}
	third.Abort()
	if data, err := os.ReadFile(filepath.Join(dir, "proj/notes/deep/mine.txt")); err != nil || string(data) != "mine" {
		t.Errorf("the user's file after the turns: %q %v", data, err)
	}
}

// TestStageReplaceWithoutDirectoryLocks: where the file system cannot lock
// a directory (NFS answers flock on one with EBADF), a replacement goes on
// without taking turns; any other lock error fails it and changes nothing.
func TestStageReplaceWithoutDirectoryLocks(t *testing.T) {
	for _, tc := range []struct {
		lockErr error
		ok      bool
	}{{syscall.EBADF, true}, {syscall.ENOLCK, true}, {syscall.EIO, false}} {
		dir := t.TempDir()
		project(t, dir)
		before, err := os.Stat(filepath.Join(dir, "proj/notes/deep/mine.txt"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(dir, WithFaults(func(op, name string) error {
			if op == "flock" {
				return tc.lockErr
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		err = replaceProject(r)
		r.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("%v: %v, want the replacement made without a lock", tc.lockErr, err)
		case tc.ok:
			checkReplaced(t, dir, before)
		case err == nil:
			t.Errorf("%v: replaced, want the lock's error", tc.lockErr)
		default:
			if data, _ := os.ReadFile(filepath.Join(dir, "proj/conf/dag.json")); string(data) != "old dag" {
				t.Errorf("%v: the failed replacement changed dag.json to %q", tc.lockErr, data)
			}
		}
	}
}

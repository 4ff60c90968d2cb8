package workspace

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a generous
// bound: a blocking open of a named pipe would otherwise hang the test.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return within 20s", what)
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	r, dir := newRoot(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "file.json"), "{}")
	long := strings.Repeat("n", 300) + ".json"
	for _, p := range []string{"pipe.json", "sock.json", "sub.json", long, "file.json/inner.json"} {
		within(t, "ReadFile("+p[:min(len(p), 20)]+")", func() {
			_, err := r.ReadFile(p)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("ReadFile(%.20s) = %v, want FileError", p, err)
			}
			if _, err := fs.ReadFile(r.FS(), p); !errors.As(err, &fe) {
				t.Errorf("fs.ReadFile(FS, %.20s) = %v, want FileError", p, err)
			}
		})
	}
	within(t, "FS().Open(pipe)", func() {
		if f, err := r.FS().Open("pipe.json"); err == nil {
			f.Close()
			t.Error("FS().Open opened a named pipe")
		}
	})
	if _, err := r.ReadFile("file.json"); err != nil {
		t.Fatalf("regular file: %v", err)
	}
}

func TestReadCapIsEnforcedAndNamed(t *testing.T) {
	dir := t.TempDir()
	r, err := New(dir, WithMaxFileBytes(1024))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "at.json"), strings.Repeat("a", 1024))
	mustWrite(t, filepath.Join(dir, "over.json"), strings.Repeat("a", 1025))
	if _, err := r.ReadFile("at.json"); err != nil {
		t.Fatalf("file at the cap: %v", err)
	}
	for name, read := range map[string]func() error{
		"ReadFile":    func() error { _, err := r.ReadFile("over.json"); return err },
		"ReadRegular": func() error { _, _, err := r.ReadRegular("over.json", 1<<30); return err },
		"FS":          func() error { _, err := fs.ReadFile(r.FS(), "over.json"); return err },
	} {
		var le *LimitError
		if err := read(); !errors.As(err, &le) || le.Limit != 1024 || !strings.Contains(err.Error(), "1024-byte limit") {
			t.Errorf("%s over the cap = %v, want LimitError naming 1024", name, err)
		}
	}
}

// listAll is every name under dir, temporaries included.
func listAll(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestStorageFaultsLeaveNothingBehind injects a full disk, a read-only
// file system and a permission error at every step of a write (the seam
// stands in for mounts an unprivileged test cannot make): each is a
// StorageError naming the errno, and the workspace is as it was.
func TestStorageFaultsLeaveNothingBehind(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EACCES} {
		for _, op := range []string{"mkdir", "create", "write", "sync", "rename"} {
			t.Run(errno.Error()+"/"+op, func(t *testing.T) {
				dir := t.TempDir()
				mustWrite(t, filepath.Join(dir, "old.json"), "old")
				r, err := New(dir, WithFaults(func(o, name string) error {
					if o == op {
						return &fs.PathError{Op: o, Path: name, Err: errno}
					}
					return nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				check := func(what string, err error) {
					t.Helper()
					var se *StorageError
					if !errors.As(err, &se) || se.Err != errno {
						t.Errorf("%s = %v, want StorageError %v", what, err, errno)
					}
				}
				target := "new.json"
				if op == "mkdir" {
					target = "sub/new.json"
				}
				check("new file", r.WriteFile(target, []byte("new"), false))
				if op != "mkdir" {
					check("overwrite", r.WriteFile("old.json", []byte("new"), true))
				}
				if st, err := r.Stage("proj"); err == nil {
					err = st.WriteFile("scripts/a.py", []byte("x"))
					if err == nil {
						err = st.Commit()
					} else {
						st.Abort()
					}
					check("staged project", err)
				} else {
					check("stage", err)
				}
				if got := listAll(t, dir); len(got) != 1 || got[0] != "old.json" {
					t.Errorf("left behind: %v", got)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "old.json")); string(b) != "old" {
					t.Errorf("old.json = %q", b)
				}
			})
		}
	}
}

// TestReadOnlyDirectoryIsAStorageError uses a real 0555 directory; root
// ignores the mode, so there the fault seam above stands in.
func TestReadOnlyDirectoryIsAStorageError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to 0555 directories; TestStorageFaultsLeaveNothingBehind covers EACCES")
	}
	r, dir := newRoot(t)
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	var se *StorageError
	if err := r.WriteFile("ro/x.json", []byte("x"), false); !errors.As(err, &se) || se.Err != syscall.EACCES {
		t.Fatalf("write into 0555 dir = %v, want StorageError EACCES", err)
	}
	if got := listAll(t, ro); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
}

func TestListingsSkipTemporariesAndWritesSweepStaleOnes(t *testing.T) {
	r, dir := newRoot(t)
	stale := filepath.Join(dir, TempPrefix+"stale")
	fresh := filepath.Join(dir, TempPrefix+"fresh")
	mustWrite(t, stale, "half")
	mustWrite(t, fresh, "half")
	old := time.Now().Add(-2 * staleAfter)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	entries, err := r.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("ReadDir shows temporaries: %v", entries)
	}
	if err := r.WriteFile("a.json", []byte("a"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary not swept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary (a write in progress) was removed: %v", err)
	}
}

func TestStageRefusesAnExistingTargetAndLeavesItAlone(t *testing.T) {
	r, dir := newRoot(t)
	st, err := r.Stage("p")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFile("a.txt", []byte("staged")); err != nil {
		t.Fatal(err)
	}
	// The target appears while the project is being built.
	if err := os.Mkdir(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "p", "mine.txt"), "mine")
	var exists *ExistsError
	if err := st.Commit(); !errors.As(err, &exists) {
		t.Fatalf("Commit over a non-empty directory = %v, want ExistsError", err)
	}
	if got := listAll(t, dir); len(got) != 2 || got[0] != "p" || got[1] != "p/mine.txt" {
		t.Fatalf("workspace after refused commit: %v", got)
	}
	if _, err := r.Stage("p"); !errors.As(err, &exists) {
		t.Fatalf("Stage of an existing directory = %v, want ExistsError", err)
	}
}

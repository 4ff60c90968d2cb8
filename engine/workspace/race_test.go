package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSymlinkSwapRaceNeverEscapes swaps a workspace directory and a
// symlink to an outside directory (renameat2 RENAME_EXCHANGE) as fast as
// it can while reads and writes go through both names. No read may return
// the outside file and no write may land outside.
func TestSymlinkSwapRaceNeverEscapes(t *testing.T) {
	const tries = 10_000
	r, dir := newRoot(t)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "f.json"), "outside")
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "d", "f.json"), "inside")
	if err := os.Symlink(outside, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	swap := func() error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "d"), unix.AT_FDCWD, filepath.Join(dir, "l"), unix.RENAME_EXCHANGE)
	}
	if err := swap(); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unavailable here: %v", err)
	}

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	var swaps atomic.Int64
	swapper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if swap() == nil {
				swaps.Add(1)
			}
		}
	})

	var next, leaks, reads, writes atomic.Int64
	deadline := time.Now().Add(60 * time.Second)
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Go(func() {
			for time.Now().Before(deadline) {
				i := next.Add(1)
				if i > tries {
					return
				}
				name := []string{"d", "l"}[i%2]
				if i%4 < 2 {
					data, err := r.ReadFile(name + "/f.json")
					if err == nil {
						reads.Add(1)
						if string(data) != "inside" {
							leaks.Add(1)
						}
					}
					continue
				}
				if r.WriteFile(fmt.Sprintf("%s/w%d-%d.json", name, w, i%8), []byte("written"), true) == nil {
					writes.Add(1)
				}
			}
		})
	}
	workers.Wait()
	close(stop)
	swapper.Wait()

	if n := next.Load(); n < tries {
		t.Fatalf("only %d of %d tries before the deadline", n, tries)
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var landed []string
	for _, e := range entries {
		if e.Name() != "f.json" {
			landed = append(landed, e.Name())
		}
	}
	t.Logf("%d tries, %d swaps, %d reads and %d writes succeeded", tries, swaps.Load(), reads.Load(), writes.Load())
	if leaks.Load() > 0 || len(landed) > 0 {
		t.Fatalf("%d reads returned the outside file; %d writes landed outside: %v", leaks.Load(), len(landed), landed)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f.json")); string(b) != "outside" {
		t.Fatalf("outside file changed: %q", b)
	}
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("the race never let a call through (%d reads, %d writes): the test proves nothing", reads.Load(), writes.Load())
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

package scriptrun

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/sandbox"
)

// bombScript forks through libc (past the runner's audit hook): BOMB_BITS
// times over, each process then sleeping (BOMB_BITS > 0), or without end,
// every process forking again and waiting a little when a fork fails
// (BOMB_BITS = 0).
const bombScript = `import ctypes, time

libc = ctypes.CDLL(None, use_errno=True)


def main(input_paths, output_paths, environ_vars, job_args):
    bits = int(environ_vars["BOMB_BITS"])
    if bits:
        for _ in range(bits):
            if libc.fork() < 0:
                print("fork failed", ctypes.get_errno(), flush=True)
        time.sleep(3600)
    failed = False
    while True:
        if libc.fork() < 0:
            if not failed:
                print("fork failed", ctypes.get_errno(), flush=True)
                failed = True
            time.sleep(0.01)
`

// TestRunContainsForkBombs: through validate.run_scripts' runner, with
// timeout_seconds 5, a fork bomb (pids limit 64; 1024 with
// CURSUS_SANDBOX_LONG=1) and 2^9 sleepers (long: 2^12 with 30 s) are
// answered within the timeout plus 1 s, and no process of the run
// outlives the answer (their own sleeps last an hour).
func TestRunContainsForkBombs(t *testing.T) {
	r := needSandbox(t)
	long := os.Getenv("CURSUS_SANDBOX_LONG") != "" && !testing.Short()
	// Forking the runner's interpreter 4096 times takes longer than 5 s
	// on a busy 2-core machine: the long sleepers get 30 s.
	bits, sleepersLimit, bombLimit, sleepersTimeout := 9, 1024, 64, 5*time.Second
	if long {
		bits, sleepersLimit, bombLimit, sleepersTimeout = 12, 8192, 1024, 30*time.Second
	}
	for _, tc := range []struct {
		name    string
		bits    int
		limit   int
		timeout time.Duration
		want    int // processes the run must be seen with, or the test proves nothing (a bomb shows in its output instead)
		// needs says what the kernel must give runs: only a cgroup's
		// pids limit keeps a bomb from taking the machine.
		needs error
	}{
		{"bomb", 0, bombLimit, 5 * time.Second, 0, sandbox.Cgroup()},
		{"sleepers", bits, sleepersLimit, sleepersTimeout, 1 << (bits - 1), eitherContainment()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("CI machines contain every run: %s", sandbox.Containment())
				}
				t.Skipf("runs are not contained enough here: %s", sandbox.Containment())
			}
			// 2^12 Python processes need more than the default 4 GiB.
			r.LimitTrees(TreeLimits{MaxProcesses: tc.limit, MemoryBytes: 12 << 30})
			defer r.LimitTrees(TreeLimits{})
			mark := "BOMB_MARK=" + tc.name + strconv.FormatInt(time.Now().UnixNano(), 36)
			stop := make(chan struct{})
			peak := make(chan int, 1)
			go func() {
				most := 0
				for {
					most = max(most, processesWithEnv(mark))
					select {
					case <-stop:
						peak <- most
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
			timeout := tc.timeout
			start := time.Now()
			res, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface),
				Script: writeScript(t, bombScript), Limits: Limits{Timeout: timeout},
				Env: map[string]string{"LABEL_FIELD": "y", "BOMB_BITS": strconv.Itoa(tc.bits), "BOMB_MARK": mark[len("BOMB_MARK="):]}})
			took := time.Since(start)
			close(stop)
			most := <-peak
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut {
				t.Errorf("want a timeout, got %+v", res)
			}
			if took > timeout+time.Second {
				t.Errorf("the answer came after %s, more than 1s past the %s timeout", took.Round(time.Millisecond), timeout)
			}
			// The sleepers sleep for an hour: any still alive after the
			// wait was left behind, however slow the machine is to reap.
			deadline := time.Now().Add(10 * time.Second)
			n := processesWithEnv(mark)
			for ; n > 0 && time.Now().Before(deadline); n = processesWithEnv(mark) {
				time.Sleep(20 * time.Millisecond)
			}
			if n > 0 {
				t.Errorf("%d processes of the run are alive 10s after the answer", n)
			}
			if most < tc.want {
				t.Errorf("at most %d processes seen at once (want ≥ %d): the script did not fork as meant\n%s\n%s", most, tc.want, lastLines(res.Stdout, 5), lastLines(res.Stderr, 5))
			}
			// A bomb starves the /proc walk above: that it reached the
			// limit shows in its output.
			if tc.bits == 0 && !strings.Contains(res.Stdout, "fork failed 11") {
				t.Errorf("the bomb never reached the pids limit (no fork failed with EAGAIN):\n%s", res.Stdout)
			}
			t.Logf("answer after %s, peak %d processes", took.Round(time.Millisecond), most)
		})
	}
}

// eitherContainment is nil where runs get a PID namespace or a cgroup.
func eitherContainment() error {
	if sandbox.Namespaces() == nil {
		return nil
	}
	return sandbox.Cgroup()
}

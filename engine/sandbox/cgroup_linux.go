package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// cgroupSetup is where runs get their cgroups: found once per process.
// Each run's group is a child of the server's own group, so it stays
// within whatever the server itself is allowed.
type cgroupSetup struct {
	v2 bool
	// base is the v2 directory run groups are made in.
	base string
	// v1 maps a v1 controller (pids, memory, freezer and, where mounted,
	// cpu) to the directory run groups are made in.
	v1 map[string]string
	// cpu: the cpu controller is there, so CPUWeight applies.
	cpu bool
}

// v1Required are the v1 controllers a run's group needs: pids and memory
// for the limits, freezer to kill a forking tree without racing it.
var v1Required = []string{"pids", "memory", "freezer"}

// findCgroups finds a cgroup hierarchy the server may create groups in,
// v2 first; the error says why there is none.
func findCgroups() (*cgroupSetup, error) {
	self, err := procfs.Self()
	if err != nil {
		return nil, err
	}
	lines, err := self.Cgroups()
	if err != nil {
		return nil, err
	}
	mounts, err := procfs.GetMounts()
	if err != nil {
		return nil, err
	}
	s, err2 := findV2(lines, mounts)
	if err2 != nil {
		var err1 error
		if s, err1 = findV1(lines, mounts); err1 != nil {
			return nil, fmt.Errorf("no usable cgroup: %v; %v", err2, err1)
		}
	}
	s.sweep()
	return s, nil
}

// sweep kills and removes the groups left by servers that died (their
// pid, in the group's name, is gone) before they could.
func (s *cgroupSetup) sweep() {
	base := s.base
	if !s.v2 {
		base = s.v1["freezer"]
	}
	names, _ := filepath.Glob(filepath.Join(base, "cursus-run-*"))
	for _, n := range names {
		name := filepath.Base(n)
		pidText, _, _ := strings.Cut(strings.TrimPrefix(name, "cursus-run-"), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		_ = s.group(name).remove(time.Now().Add(time.Second))
	}
}

// groupDir is where the cgroup at path (as /proc/self/cgroup names it)
// is on mount m.
func groupDir(m *procfs.MountInfo, path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, m.Root)
	if !ok || (rel != "" && m.Root != "/" && !strings.HasPrefix(rel, "/")) {
		return "", false
	}
	return filepath.Join(m.MountPoint, rel), true
}

func findV2(lines []procfs.Cgroup, mounts []*procfs.MountInfo) (*cgroupSetup, error) {
	var path string
	found := false
	for _, l := range lines {
		if l.HierarchyID == 0 {
			path, found = l.Path, true
		}
	}
	if !found {
		return nil, errors.New("cgroup v2: this process is in no v2 group")
	}
	base := ""
	for _, m := range mounts {
		if m.FSType == "cgroup2" {
			if d, ok := groupDir(m, path); ok {
				base = d
				break
			}
		}
	}
	if base == "" {
		return nil, errors.New("cgroup v2: no cgroup2 mount holds this process's group")
	}
	avail, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	have := strings.Fields(string(avail))
	want := []string{"pids", "memory"}
	for _, c := range want {
		if !contains(have, c) {
			return nil, fmt.Errorf("cgroup v2: the %s controller is not available in %s", c, base)
		}
	}
	s := &cgroupSetup{v2: true, base: base, cpu: contains(have, "cpu")}
	if s.cpu {
		want = append(want, "cpu")
	}
	if err := delegate(base, want); err != nil {
		return nil, fmt.Errorf("cgroup v2: cannot give child groups of %s the %s controllers: %w (run the server in a cgroup it may delegate, e.g. systemd's Delegate=yes)", base, strings.Join(want, ", "), err)
	}
	if err := probeMkdir(base); err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	return s, nil
}

// delegate enables controllers for base's child groups. A v2 group with
// processes cannot do that (no internal processes), so where base holds
// only this server it moves into a leaf child of base first.
func delegate(base string, controllers []string) error {
	var add []string
	for _, c := range controllers {
		add = append(add, "+"+c)
	}
	enable := func() error {
		return os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte(strings.Join(add, " ")), 0)
	}
	err := enable()
	if err == nil || !errors.Is(err, unix.EBUSY) {
		return err
	}
	leaf := filepath.Join(base, "cursus-server")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return err
	}
	return enable()
}

func findV1(lines []procfs.Cgroup, mounts []*procfs.MountInfo) (*cgroupSetup, error) {
	s := &cgroupSetup{v1: map[string]string{}}
	for _, l := range lines {
		for _, c := range l.Controllers {
			for _, m := range mounts {
				if _, ok := m.SuperOptions[c]; !ok || m.FSType != "cgroup" {
					continue
				}
				if d, ok := groupDir(m, l.Path); ok {
					s.v1[c] = d
				}
			}
		}
	}
	for _, c := range v1Required {
		if s.v1[c] == "" {
			return nil, fmt.Errorf("cgroup v1: the %s controller is not mounted", c)
		}
	}
	for c, d := range s.v1 {
		if !contains(v1Required, c) && c != "cpu" {
			delete(s.v1, c)
			continue
		}
		if err := probeMkdir(d); err != nil {
			if c == "cpu" {
				delete(s.v1, c)
				continue
			}
			return nil, fmt.Errorf("cgroup v1 %s: %w", c, err)
		}
	}
	_, s.cpu = s.v1["cpu"]
	return s, nil
}

// probeMkdir checks that groups can be made (and removed) in dir.
func probeMkdir(dir string) error {
	d := filepath.Join(dir, fmt.Sprintf("cursus-probe-%d", os.Getpid()))
	if err := os.Mkdir(d, 0o755); err != nil {
		return fmt.Errorf("cannot create a group in %s: %w", dir, err)
	}
	return os.Remove(d)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (s *cgroupSetup) String() string {
	if s.v2 {
		if s.cpu {
			return "cgroup v2 (pids, memory, cpu)"
		}
		return "cgroup v2 (pids, memory)"
	}
	if s.cpu {
		return "cgroup v1 (pids, memory, freezer, cpu)"
	}
	return "cgroup v1 (pids, memory, freezer)"
}

// runCgroup is one run's group (one directory per v1 controller).
type runCgroup struct {
	v2     bool
	dirs   []string
	killer string // the v1 freezer directory, or the v2 one
}

var runSeq atomic.Uint64

// create makes a run's group with lim's Processes, MemoryBytes and
// CPUWeight.
func (s *cgroupSetup) create(lim Limits) (*runCgroup, error) {
	g := s.group(fmt.Sprintf("cursus-run-%d-%d", os.Getpid(), runSeq.Add(1)))
	type setting struct{ file, value string }
	var settings []setting
	add := func(file string, v uint64) {
		if v > 0 {
			settings = append(settings, setting{file, strconv.FormatUint(v, 10)})
		}
	}
	if s.v2 {
		add("pids.max", lim.Processes)
		add("memory.max", lim.MemoryBytes)
		if lim.MemoryBytes > 0 {
			settings = append(settings, setting{"memory.swap.max", "0"})
		}
		if s.cpu {
			add("cpu.weight", min(lim.CPUWeight, 10000))
		}
	} else {
		add("pids.max", lim.Processes)
		add("memory.limit_in_bytes", lim.MemoryBytes)
		add("memory.memsw.limit_in_bytes", lim.MemoryBytes)
		if s.cpu && lim.CPUWeight > 0 {
			// cpu.shares is 1024 for a peer where cpu.weight is 100.
			add("cpu.shares", max(2, min(lim.CPUWeight, 10000)*1024/100))
		}
	}
	for _, d := range g.dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			g.remove(time.Now())
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	for _, st := range settings {
		err := errors.New("no group has it")
		for _, d := range g.dirs {
			p := filepath.Join(d, st.file)
			if _, statErr := os.Stat(p); statErr != nil {
				continue
			}
			err = os.WriteFile(p, []byte(st.value), 0)
			break
		}
		// memsw and swap.max exist only where swap is accounted.
		if err != nil && st.file != "memory.memsw.limit_in_bytes" && st.file != "memory.swap.max" {
			g.remove(time.Now())
			return nil, fmt.Errorf("cgroup %s: %w", st.file, err)
		}
	}
	return g, nil
}

// group is the run group called name (made or not).
func (s *cgroupSetup) group(name string) *runCgroup {
	g := &runCgroup{v2: s.v2}
	if s.v2 {
		g.dirs = []string{filepath.Join(s.base, name)}
	} else {
		for _, c := range []string{"freezer", "pids", "memory", "cpu"} {
			if d, ok := s.v1[c]; ok {
				g.dirs = append(g.dirs, filepath.Join(d, name))
			}
		}
	}
	g.killer = g.dirs[0]
	return g
}

// enter moves pid into the group.
func (g *runCgroup) enter(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// kill SIGKILLs every process of the group. The group is frozen first,
// so a forking tree cannot add processes behind the kill and no pid read
// can be reused before its signal lands; the killed processes die when
// it thaws.
func (g *runCgroup) kill() {
	if g.v2 {
		if os.WriteFile(filepath.Join(g.killer, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	g.freeze(true)
	for _, pid := range g.procs() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	g.freeze(false)
}

// freeze freezes or thaws the group; freezing waits (briefly) until the
// kernel reports it done.
func (g *runCgroup) freeze(on bool) {
	file, value, done := "freezer.state", "THAWED", "THAWED"
	if on {
		value, done = "FROZEN", "FROZEN"
	}
	if g.v2 {
		file, value, done = "cgroup.freeze", "0", "frozen 0"
		if on {
			value, done = "1", "frozen 1"
		}
	}
	if os.WriteFile(filepath.Join(g.killer, file), []byte(value), 0) != nil || !on {
		return
	}
	state := file
	if g.v2 {
		state = "cgroup.events"
	}
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(g.killer, state))
		if err != nil || strings.Contains(string(b), done) {
			return
		}
	}
}

// procs lists the group's processes.
func (g *runCgroup) procs() []int {
	var pids []int
	seen := map[int]bool{}
	for _, d := range g.dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// remove kills what is left, waits until the group is empty and removes
// it, giving up at deadline.
func (g *runCgroup) remove(deadline time.Time) error {
	var err error
	for i := 0; ; i++ {
		if i%50 == 0 && len(g.procs()) > 0 {
			g.kill()
		}
		err = nil
		for _, d := range g.dirs {
			if e := os.Remove(d); e != nil && !errors.Is(e, os.ErrNotExist) {
				err = e
			}
		}
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Python is what a confined CPython needs to read: its executable (shims
// resolved), its standard library, site-packages and shared libraries,
// and the public system data its libraries read.
type Python struct {
	Exe       string
	ReadDirs  []string
	ReadFiles []string
}

// FindPython asks the interpreter python, started with env as a run will
// start it, where its own files are. The script runner, the serving
// emulation and the local pipeline run all confine Python the same way.
func FindPython(ctx context.Context, python string, env []string) (Python, error) {
	cmd := exec.CommandContext(ctx, python, "-c", pythonFilesQuery)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return Python{}, fmt.Errorf("ask %s for its files: %w", filepath.Base(python), err)
	}
	var files struct {
		Exe         string
		Dirs, Files []string
	}
	if err := json.Unmarshal(out, &files); err != nil {
		return Python{}, fmt.Errorf("ask %s for its files: %w", filepath.Base(python), err)
	}
	return Python{
		Exe:       files.Exe,
		ReadDirs:  append(append([]string{}, pythonSystemDirs...), files.Dirs...),
		ReadFiles: append([]string{files.Exe, "/etc/ld.so.cache", "/dev/urandom", "/dev/zero"}, files.Files...),
	}, nil
}

// pythonFilesQuery prints the interpreter's executable, directories and
// files as JSON.
const pythonFilesQuery = `import json, os, sys, sysconfig
dirs = {p for p in sys.path if os.path.isabs(p) and os.path.isdir(p) and p != "/"}
dirs.update(v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib") and os.path.isdir(v))
libdir = sysconfig.get_config_var("LIBDIR")
if libdir and os.path.isdir(libdir) and libdir != "/":
    dirs.add(libdir)
exe = os.path.realpath(sys.executable)
bindir = os.path.dirname(sys.executable)
files = [os.path.join(bindir, "pyvenv.cfg"), os.path.join(os.path.dirname(bindir), "pyvenv.cfg")]
print(json.dumps({"exe": exe, "dirs": sorted(dirs), "files": files}))
`

// pythonSystemDirs hold the C libraries the interpreter and its
// extensions load, and the public system data libraries read: time zones
// (Debian's pandas imports pytz, which reads the system's) and the CPU
// topology numerical libraries size their thread pools by.
var pythonSystemDirs = []string{"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib",
	"/usr/share/zoneinfo", "/sys/devices/system/cpu"}

// PythonEnv is the environment a confined Python starts from, with its
// home and temporary files under dir: nothing of the server's but PATH
// and the locale, no user site-packages, no bytecode written, UTF-8 I/O
// and a plotting backend that needs no display.
func PythonEnv(dir string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONNOUSERSITE=1",
		"PYTHONIOENCODING=utf-8",
		"MPLBACKEND=Agg",
	}
	for _, k := range []string{"LANG", "LC_ALL"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

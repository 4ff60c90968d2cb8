package steps

import (
	"io/fs"
	"strings"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// DirsStamp is a digest of the step interface files of dirs (names and
// contents; workspace.StampDirs), so that a changed directory is noticed
// whatever the clock granularity of its file system.
func DirsStamp(dirs []string) string {
	return workspace.StampDirs(dirs, MaxFileSize, func(fsys fs.FS, _ string) ([]string, []string) {
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			return nil, []string{err.Error()}
		}
		var files []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), FileSuffix) {
				files = append(files, e.Name())
			}
		}
		return files, nil
	})
}

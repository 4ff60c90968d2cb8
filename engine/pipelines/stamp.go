package pipelines

import (
	"io/fs"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// DirsStamp is a digest of what Load reads from the extra directories dirs:
// each one's catalog_index.json and <framework>/<name>.dag.json files
// (names and contents), with the problems finding them met
// (workspace.StampDirs).
func DirsStamp(dirs []string) string {
	return workspace.StampDirs(dirs, MaxFileSize, func(fsys fs.FS, dir string) ([]string, []string) {
		files, problems := dagFiles(fsys, dir)
		notes := make([]string, 0, len(problems))
		for _, p := range problems {
			notes = append(notes, p.String())
		}
		return append([]string{IndexFile}, files...), notes
	})
}

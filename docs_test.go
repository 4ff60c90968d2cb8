package cursus

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// markdownFiles are the repository's tracked .md files.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "*.md").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 5 {
		t.Fatalf("found %d markdown files; is the test running at the repository root?", len(files))
	}
	return files
}

var (
	// mdLink is an inline link or image: [text](target) or [text](target "title").
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// mdFence opens or closes a fenced code block.
	mdFence = regexp.MustCompile("^\\s*(```|~~~)")
	// mdHeading is an ATX heading.
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// anchorDrop is what GitHub drops from a heading to make its anchor.
	anchorDrop = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchors are the #fragments GitHub gives a markdown file's headings.
func anchors(src string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(src, "\n") {
		if mdFence.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		a := strings.ToLower(m[1])
		a = strings.NewReplacer("`", "", "*", "").Replace(a)
		a = anchorDrop.ReplaceAllString(a, "")
		a = strings.ReplaceAll(a, " ", "-")
		if n := seen[a]; n > 0 {
			out[a+"-"+string(rune('0'+n))] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestMarkdownLinksResolve: every relative link in the repository's
// markdown names a file or directory that exists, and every #fragment
// names a heading of its target.
func TestMarkdownLinksResolve(t *testing.T) {
	links := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for n, line := range strings.Split(string(data), "\n") {
			if mdFence.MatchString(line) {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := file + ":" + strconv.Itoa(n+1)
				ref, frag, _ := strings.Cut(target, "#")
				dest := file
				if ref != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(ref))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: link %q: %s does not exist", where, target, dest)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				body, err := os.ReadFile(dest)
				if err != nil {
					t.Errorf("%s: link %q: %v", where, target, err)
					continue
				}
				if !anchors(string(body))[frag] {
					t.Errorf("%s: link %q: %s has no heading #%s", where, target, dest, frag)
				}
			}
		}
	}
	t.Logf("%d relative links checked", links)
}

//go:build race

package scaffold

// raceDetector is true in a -race build.
const raceDetector = true

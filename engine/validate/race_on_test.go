//go:build race

package validate

// raceDetector: the race detector slows everything five to ten times.
const raceDetector = true

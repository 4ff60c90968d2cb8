//go:build race

package scriptrun

// raceDetector: the race detector slows everything five to ten times.
const raceDetector = true

//go:build race

package server

// raceDetector: the race detector slows everything five to ten times.
const raceDetector = true

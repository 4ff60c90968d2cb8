//go:build race

package handlers

// raceDetector: the race detector slows everything five to ten times.
const raceDetector = true

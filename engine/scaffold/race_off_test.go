//go:build !race

package scaffold

const raceDetector = false

//go:build !race

package scriptrun

const raceDetector = false

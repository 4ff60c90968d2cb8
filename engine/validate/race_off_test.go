//go:build !race

package validate

const raceDetector = false

//go:build !race

package handlers

const raceDetector = false

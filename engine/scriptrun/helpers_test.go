package scriptrun

import (
	"testing"

	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/steps"
)

// prepInterface and goodScript are the toy step and the script that
// satisfies it exactly.
const (
	prepInterface = enginetest.ToyPrepInterface
	goodScript    = enginetest.ToyPrepScript
)

func mustInterface(t testing.TB, src string) *steps.Interface { return enginetest.Interface(t, src) }

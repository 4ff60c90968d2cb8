package verbatim

import "testing"

func TestMarshalLeavesHTMLCharacters(t *testing.T) {
	got, err := Marshal(map[string]any{"s": "a<b>&c", "n": 1})
	if err != nil || string(got) != `{"n":1,"s":"a<b>&c"}` {
		t.Fatalf("Marshal = %s, %v", got, err)
	}
}

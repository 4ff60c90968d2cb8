package deploy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/server"
)

// configKeys lists every dotted key of the deployment config
// (server.Config), from its yaml tags; maps and lists are single keys.
func configKeys() []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			key := strings.TrimPrefix(prefix+"."+tag, ".")
			if ft := t.Field(i).Type; ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
				walk(ft, key)
				continue
			}
			keys = append(keys, key)
		}
	}
	walk(reflect.TypeOf(server.Config{}), "")
	return keys
}

// lookupKey finds a dotted key in a decoded YAML document.
func lookupKey(doc map[string]any, key string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func TestConfigKeysSeesNestedSections(t *testing.T) {
	keys := strings.Join(configKeys(), " ")
	for _, want := range []string{"listen.addr", "auth.oidc.issuer", "limits.tool_timeouts", "gates.enable_destructive"} {
		if !strings.Contains(" "+keys+" ", " "+want+" ") {
			t.Errorf("configKeys() misses %s: %s", want, keys)
		}
	}
	if strings.Contains(keys, "shutdown_timeout.") {
		t.Error("configKeys() walked into time.Duration")
	}
}

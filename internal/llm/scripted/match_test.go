package scripted

import (
	"regexp"
	"testing"
)

var matchPatterns = map[string]bool{
	`(?s).*`: true, `.*`: true, `(?s)(.*)`: true, `a*`: true, `(?:x|)`: true, `(?P<all>(?s).*)`: true, ``: true,
	`^`: false, `$`: false, `^.*$`: false, `(?s)^.*`: false, `\b`: false, `\B`: false, `(?m)^.*`: false, `\A`: false,
	`.+`: false, `a`: false, `(?s).+|`: true, `x?\z`: false, `[^a]*`: true,
}

func TestMatchesAll(t *testing.T) {
	inputs := []string{"", "a", "hello world", "line\nbreak", "\xff", "stream 5", " "}
	for pattern, want := range matchPatterns {
		re := regexp.MustCompile(pattern)
		if got := matchesAll(re); got != want {
			t.Errorf("matchesAll(%q) = %v, want %v", pattern, got, want)
		}
		for _, in := range inputs {
			if matchesAll(re) && !re.MatchString(in) {
				t.Errorf("matchesAll(%q) but it does not match %q", pattern, in)
			}
		}
	}
}

func FuzzMatchesAll(f *testing.F) {
	for p := range matchPatterns {
		f.Add(p, "hello\nworld")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		if matchesAll(re) && !re.MatchString(text) {
			t.Fatalf("matchesAll(%q) but it does not match %q", pattern, text)
		}
	})
}

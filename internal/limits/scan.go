package limits

// bodyShape is what the edge reads of a JSON request body without
// decoding it: how deep it nests, the largest "parts" array it holds and,
// for JSON-RPC, its top-level "method".
type bodyShape struct {
	depth    int
	maxParts int
	method   string
}

// frame is one open object or array during a scan.
type frame struct {
	array  bool
	parts  bool // an array under the key "parts"
	commas int
	empty  bool
}

// scanBody reads b's shape in one pass. It does not validate: a malformed
// body gets whatever shape its well-formed prefix has, and the face that
// decodes it answers the syntax error. It stops once the nesting passes
// depthCap, so a hostile body costs at most one linear pass.
func scanBody(b []byte, depthCap int) bodyShape {
	var sh bodyShape
	stack := make([]frame, 0, 16)
	lastKey := "" // the key of the value being read, if it is a member
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			start := i
			i = stringEnd(b, i)
			if j := skipSpace(b, i+1); j < len(b) && b[j] == ':' && len(stack) > 0 && !stack[len(stack)-1].array {
				lastKey = string(b[start+1 : max(start+1, i)])
				if len(stack) == 1 && lastKey == "method" {
					sh.method = stringValue(b, j+1)
				}
				continue
			}
			markValue(stack)
		case '{', '[':
			markValue(stack)
			stack = append(stack, frame{array: c == '[', parts: c == '[' && lastKey == "parts", empty: true})
			if sh.depth = max(sh.depth, len(stack)); sh.depth > depthCap {
				return sh
			}
			lastKey = ""
		case '}', ']':
			if n := len(stack); n > 0 {
				if f := stack[n-1]; f.parts && !f.empty {
					sh.maxParts = max(sh.maxParts, f.commas+1)
				}
				stack = stack[:n-1]
			}
			lastKey = ""
		case ',':
			lastKey = ""
			if n := len(stack); n > 0 {
				stack[n-1].commas++
			}
		case ' ', '\t', '\r', '\n', ':':
		default:
			markValue(stack)
		}
	}
	return sh
}

// markValue notes that the innermost container holds a value.
func markValue(stack []frame) {
	if n := len(stack); n > 0 {
		stack[n-1].empty = false
	}
}

// stringEnd returns the index of the quote closing the string that opens
// at b[i] (len(b) when it is not closed).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringValue returns the plain (escape-free) string starting at or after
// b[i], "" for anything else; method names have no escapes.
func stringValue(b []byte, i int) string {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '"' {
		return ""
	}
	end := stringEnd(b, i)
	if end >= len(b) {
		return ""
	}
	s := b[i+1 : end]
	for _, c := range s {
		if c == '\\' {
			return ""
		}
	}
	return string(s)
}

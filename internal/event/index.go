package event

import "strings"

// index finds the subscriptions whose pattern matches a subject without
// looking at the others. It is a token trie: each node has literal children,
// an optional '*' child, the subscriptions whose pattern ends at the node,
// and those whose pattern continues with '>' after it. A publish costs one
// map lookup per subject token (plus the '*' branches that exist), however
// many subscriptions there are; 1,000 runs watched as "engine.run.<id>.>"
// cost a publish on an unwatched run three lookups.
//
// A subscription lives at exactly one place in the trie and a subject
// reaches each place at most once, so collect never yields duplicates.
//
// index is not safe for concurrent use; InProc guards it with its mutex.
type index struct {
	root node
	size int
}

type node struct {
	literal map[string]*node
	star    *node
	exact   []*subscription // patterns that end at this node
	rest    []*subscription // patterns that end with ".>" after this node
}

// add files s under its pattern, which must be valid.
func (x *index) add(s *subscription) {
	x.root.add(string(s.pattern), s)
	x.size++
}

// remove takes s out again, pruning nodes left empty so that patterns
// naming short-lived runs do not leave a trail behind.
func (x *index) remove(s *subscription) {
	x.root.remove(string(s.pattern), s)
	x.size--
}

// collect appends the subscriptions matching subject (which must be valid)
// to out.
func (x *index) collect(subject Subject, out []*subscription) []*subscription {
	return x.root.collect(string(subject), out)
}

// all appends every subscription in the trie to out.
func (x *index) all(out []*subscription) []*subscription {
	return x.root.all(out)
}

func (n *node) add(pattern string, s *subscription) {
	tok, rest, more := strings.Cut(pattern, ".")
	if tok == ">" {
		n.rest = appendSlot(n.rest, s)
		return
	}
	c := n.child(tok)
	if c == nil {
		c = &node{}
		if tok == "*" {
			n.star = c
		} else {
			if n.literal == nil {
				n.literal = make(map[string]*node)
			}
			n.literal[tok] = c
		}
	}
	if more {
		c.add(rest, s)
		return
	}
	c.exact = appendSlot(c.exact, s)
}

func (n *node) remove(pattern string, s *subscription) {
	tok, rest, more := strings.Cut(pattern, ".")
	if tok == ">" {
		n.rest = removeSlot(n.rest, s)
		return
	}
	c := n.child(tok)
	if more {
		c.remove(rest, s)
	} else {
		c.exact = removeSlot(c.exact, s)
	}
	if !c.empty() {
		return
	}
	if tok == "*" {
		n.star = nil
	} else {
		delete(n.literal, tok)
	}
}

// collect matches subject, which holds at least one token, below n.
func (n *node) collect(subject string, out []*subscription) []*subscription {
	out = append(out, n.rest...)
	tok, rest, more := strings.Cut(subject, ".")
	if c := n.literal[tok]; c != nil {
		out = c.reached(rest, more, out)
	}
	if n.star != nil {
		out = n.star.reached(rest, more, out)
	}
	return out
}

// reached continues collect at n, the node a subject token led to.
func (n *node) reached(rest string, more bool, out []*subscription) []*subscription {
	if !more {
		return append(out, n.exact...)
	}
	return n.collect(rest, out)
}

func (n *node) all(out []*subscription) []*subscription {
	out = append(out, n.exact...)
	out = append(out, n.rest...)
	for _, c := range n.literal {
		out = c.all(out)
	}
	if n.star != nil {
		out = n.star.all(out)
	}
	return out
}

func (n *node) child(tok string) *node {
	if tok == "*" {
		return n.star
	}
	return n.literal[tok]
}

func (n *node) empty() bool {
	return len(n.literal) == 0 && n.star == nil && len(n.exact) == 0 && len(n.rest) == 0
}

// appendSlot and removeSlot keep s.slot equal to s's position in the list it
// is filed in, so that removal is O(1) even when thousands of subscriptions
// share a pattern.
func appendSlot(list []*subscription, s *subscription) []*subscription {
	s.slot = len(list)
	return append(list, s)
}

func removeSlot(list []*subscription, s *subscription) []*subscription {
	last := len(list) - 1
	moved := list[last]
	list[s.slot], moved.slot = moved, s.slot
	list[last] = nil
	return list[:last]
}

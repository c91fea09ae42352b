package runtime

import (
	"errors"
	"strconv"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// ErrUnsupportedContent is a message part in a media type the agent does
// not take (its card's input modes): the faces answer it with their own
// code (A2A ContentTypeNotSupportedError, REST 415).
var ErrUnsupportedContent = errors.New("content type not supported by the agent")

// partMediaType is the media type a part carries: its own when it names
// one, else text/plain for text, application/json for data and
// application/octet-stream for a file.
func partMediaType(p model.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch p.Type {
	case model.PartText:
		return "text/plain"
	case model.PartData:
		return "application/json"
	}
	return "application/octet-stream"
}

// checkInputModes refuses, before anything is stored, a message with a
// part the agent does not take: every part's media type must match one of
// the card's default input modes or a skill's (exactly, or by a "type/*"
// or "*/*" wildcard). A card that declares no modes takes anything.
func checkInputModes(a *Agent, m model.Message) error {
	modes := append([]string(nil), a.Card.DefaultInputModes...)
	for _, s := range a.Card.Skills {
		modes = append(modes, s.InputModes...)
	}
	if len(modes) == 0 {
		return nil
	}
	for i, p := range m.Parts {
		mt := partMediaType(p)
		if !acceptsMediaType(modes, mt) {
			return errdefs.WithField("message.parts["+strconv.Itoa(i)+"]", errdefs.Validation(
				errorsJoin(ErrUnsupportedContent, "agent "+a.ID+" takes "+strings.Join(modes, ", ")+", not "+mt)))
		}
	}
	return nil
}

func acceptsMediaType(modes []string, mt string) bool {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	major, _, _ := strings.Cut(mt, "/")
	for _, m := range modes {
		switch m = strings.ToLower(strings.TrimSpace(m)); m {
		case mt, "*/*", major + "/*":
			return true
		}
	}
	return false
}

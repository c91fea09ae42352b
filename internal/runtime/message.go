package runtime

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// CheckUserMessage reports what is wrong with a user message, and where
// (a path such as "message.parts[0].text"), before anything is stored.
func CheckUserMessage(m model.Message) (field string, err error) {
	if m.Role != "" && m.Role != model.RoleUser {
		return "message.role", errdefs.Validationf("must be %q, got %q", model.RoleUser, m.Role)
	}
	if m.ID != "" {
		if err := checkClientID(m.ID); err != nil {
			return "message.id", err
		}
	}
	if len(m.Parts) == 0 {
		return "message.parts", errdefs.Validationf("must not be empty")
	}
	for i, p := range m.Parts {
		if p.Type == model.PartToolCall || p.Type == model.PartToolResult {
			return partField(i) + ".type", errdefs.Validationf("a user message cannot carry %s parts", p.Type)
		}
		if err := p.Validate(); err != nil {
			var pe *model.PartError
			if errors.As(err, &pe) {
				return partField(i) + "." + pe.Member, errdefs.Validationf("%s", pe.Reason)
			}
			return partField(i), errdefs.Validation(err)
		}
		if p.Type == model.PartText && strings.TrimSpace(p.Text) == "" {
			return partField(i) + ".text", errdefs.Validationf("must not be blank (only white space)")
		}
	}
	return "", nil
}

func partField(i int) string { return "message.parts[" + strconv.Itoa(i) + "]" }

// maxClientID bounds the ids a client may choose (context and message ids).
const maxClientID = 256

// checkClientID reports whether id, chosen by a client, can name a context
// or a message: 1 to maxClientID bytes of UTF-8 without white space or
// control characters, so that it survives URLs, logs and headers as is.
func checkClientID(id string) error {
	if id == "" || len(id) > maxClientID {
		return errdefs.Validationf("%q: want 1 to %d bytes", truncateID(id), maxClientID)
	}
	if !utf8.ValidString(id) {
		return errdefs.Validationf("%q: not valid UTF-8", truncateID(id))
	}
	for _, c := range id {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			return errdefs.Validationf("%q: must not contain white space or control characters", truncateID(id))
		}
	}
	return nil
}

// truncateID keeps an error message about an id readable.
func truncateID(id string) string {
	if len(id) <= 64 {
		return id
	}
	return id[:64] + "…"
}

// normaliseUserMessage checks a user message and fills in its defaults; its
// time is put in the form stores keep (see store.StoredTime).
func normaliseUserMessage(m model.Message) (run.Message, error) {
	if field, err := CheckUserMessage(m); err != nil {
		return run.Message{}, errdefs.WithField(field, err)
	}
	if m.Role == "" {
		m.Role = model.RoleUser
	}
	if m.ID == "" {
		m.ID = newID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = storedNow()
	} else {
		m.CreatedAt = store.StoredTime(m.CreatedAt)
	}
	return run.Message{Message: m}, nil
}

func errorsJoin(base error, detail string) error {
	return &detailed{base: base, detail: detail}
}

// detailed is a sentinel error with a specific message.
type detailed struct {
	base   error
	detail string
}

func (e *detailed) Error() string { return e.detail + ": " + e.base.Error() }
func (e *detailed) Unwrap() error { return e.base }

package remote

import (
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/model"
)

// toPeer converts the local parts a peer message carries: text, data and
// files. Tool calls and results are the local run's business and stay.
func toPeer(parts []model.Part) []*a2a.Part {
	out := make([]*a2a.Part, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case model.PartText:
			out = append(out, a2a.NewTextPart(p.Text))
		case model.PartData:
			var v any
			if json.Unmarshal(p.Data, &v) == nil {
				out = append(out, a2a.NewDataPart(v))
			}
		case model.PartFile:
			if p.File == nil {
				continue
			}
			var ap *a2a.Part
			if p.File.URL != "" {
				ap = a2a.NewFileURLPart(a2a.URL(p.File.URL), p.MediaType)
			} else {
				ap = a2a.NewRawPart(p.File.Bytes)
				ap.MediaType = p.MediaType
			}
			ap.Filename = p.File.Name
			out = append(out, ap)
		}
	}
	return out
}

// fromPeer converts a peer's parts to local ones; parts of a kind agentd
// does not know are dropped.
func fromPeer(parts []*a2a.Part) []model.Part {
	out := make([]model.Part, 0, len(parts))
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, model.TextPart(string(c)))
		case a2a.Data:
			if dp, err := model.DataPart(c.Value); err == nil {
				out = append(out, dp)
			}
		case a2a.Raw:
			out = append(out, model.FileBytesPart(p.Filename, p.MediaType, []byte(c)))
		case a2a.URL:
			out = append(out, model.FileURLPart(p.Filename, p.MediaType, string(c)))
		}
	}
	return out
}

// textOnly returns the concatenated text of parts and whether every part
// is text: such artifacts are the peer's answer, streamed as tokens.
func textOnly(parts []*a2a.Part) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		t, ok := p.Content.(a2a.Text)
		if !ok {
			return "", false
		}
		b.WriteString(string(t))
	}
	return b.String(), len(parts) > 0
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

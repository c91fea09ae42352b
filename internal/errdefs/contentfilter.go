package errdefs

// ClassContentFilter is a model answer the provider withheld or cut by its
// content filter (finish_reason "content_filter"): asking again the same
// way will not help, and it is not the agent's fault either.
const ClassContentFilter Class = "content_filter"

// ContentFilterf builds a ClassContentFilter error.
func ContentFilterf(format string, args ...any) error {
	return Newf(ClassContentFilter, format, args...)
}

// IsContentFilter reports whether err is a ClassContentFilter error.
func IsContentFilter(err error) bool { return Is(err, ClassContentFilter) }

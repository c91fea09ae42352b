package run

import "context"

// DefaultTenant is the tenant of requests that carry none.
const DefaultTenant = "default"

type tenantKey struct{}

// WithTenant returns a context whose operations — a store's queries, a
// face's reads — are scoped to tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant of ctx, DefaultTenant when none is set.
func TenantFrom(ctx context.Context) string {
	if t, ok := ctx.Value(tenantKey{}).(string); ok && t != "" {
		return t
	}
	return DefaultTenant
}

# Multi-stage build: a static agentd binary on a distroless, non-root base.
# The binary carries everything it needs: the PostgreSQL migrations, the
# OpenAPI document and the demo configuration are embedded (go:embed), so
# the image is the binary alone. scripts/check-container.sh verifies it.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/server /server
# 65532 is distroless's nonroot user; numeric, so that a runtime can check
# it is not root without reading /etc/passwd.
USER 65532:65532
EXPOSE 8080
# No shell or curl in the image: the binary asks its own /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/server", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
# Inside a container the server listens beyond loopback. The default
# command runs the embedded demo without authentication; a deployment
# replaces it with its configuration, whose auth section lets agentd listen
# without --allow-unauthenticated:
#   docker run … agentd --config /etc/agentd/agentd.yaml
ENTRYPOINT ["/server", "--addr", "0.0.0.0:8080", "--log-format", "json"]
CMD ["--allow-unauthenticated"]

# Multi-stage build: a static agentd binary on a distroless, non-root base.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/server /server
USER nonroot:nonroot
EXPOSE 8080
# Inside a container the server must listen beyond loopback; put it behind an
# authenticating proxy, or configure API keys when they are available.
ENTRYPOINT ["/server", "--addr", "0.0.0.0:8080", "--allow-unauthenticated", "--log-format", "json"]

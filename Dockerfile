# mcp-toolsearch container images (docs: README "Install", docs/container.md).
#
#   docker build -t mcp-toolsearch .                      # static binary on scratch, non-root
#   docker build --target node -t mcp-toolsearch:node .   # + Node.js, for npx-launched stdio upstreams
#   docker run -p 8080:8080 -v "$PWD/config.toml:/config/config.toml:ro" mcp-toolsearch
#
# The config is read from /config/config.toml (mount it read-only). The proxy serves Streamable
# HTTP at :8080/mcp and SSE at /sse, and /healthz for the HEALTHCHECK. Secrets referenced as
# ${VAR} in the config come from `docker run -e VAR=...`.

ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG NODE_IMAGE=docker.io/library/node:22-bookworm-slim

# ---- build: a static binary (CGO_ENABLED=0), version stamped like the release archives
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
COPY third_party/ third_party/
RUN go mod download
COPY . .
ARG VERSION=container
RUN CGO_ENABLED=0 go build -trimpath -tags grpcnotrace \
      -ldflags "-s -w -X github.com/mcp-toolsearch/mcp-toolsearch/proxy.Version=${VERSION}" \
      -o /out/mcp-toolsearch . \
 && mkdir -p /out/tmp /out/config && chmod 1777 /out/tmp

# ---- node: Debian slim + Node.js (npx) for stdio upstreams such as
#      npx -y @modelcontextprotocol/server-memory; runs as the image's "node" user (uid 1000).
FROM ${NODE_IMAGE} AS node
COPY --from=build /out/mcp-toolsearch /usr/local/bin/mcp-toolsearch
RUN mkdir -p /config && chown node:node /config
USER node
ENV HOME=/home/node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["mcp-toolsearch", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["mcp-toolsearch"]
CMD ["serve", "--config", "/config/config.toml", "--transport", "http", "--listen", "0.0.0.0:8080"]

# ---- default: nothing but the binary, /tmp (the code sandbox's worker directories) and /config
FROM scratch AS static
COPY --from=build /out/tmp /tmp
COPY --from=build /out/config /config
COPY --from=build /out/mcp-toolsearch /mcp-toolsearch
ENV TMPDIR=/tmp
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/mcp-toolsearch", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/mcp-toolsearch"]
CMD ["serve", "--config", "/config/config.toml", "--transport", "http", "--listen", "0.0.0.0:8080"]

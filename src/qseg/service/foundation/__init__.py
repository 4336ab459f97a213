"""The HTTP foundation both web apps stand on: settings, who may call (access, credentials,
throttle), the middlewares and the HTTP protocol, the error table, request bodies, the
service's own pages and files, and the routes every service has (login, docs, status)."""

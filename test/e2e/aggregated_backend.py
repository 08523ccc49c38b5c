#!/usr/bin/env python3
"""A stand-in aggregated API server for subresources.kubevirt.io/v1, for testenv_test.sh.

It proves what kube-apiserver's aggregation layer does for a backend such as vmgate's: it
connects with the front-proxy client certificate (the TLS handshake requires one signed by
--client-ca, the front-proxy CA) and names the user in X-Remote-User / X-Remote-Group.

  aggregated_backend.py --address IP --cert FILE --key FILE --client-ca FILE

Binds port 0 on IP and prints the port on stdout. Serves the group version's discovery document
(which the aggregator probes for availability), /version (the release virtctl compares with
its own) and /whoami (the caller as the front proxy presented it).
"""
import argparse
import http.server
import json
import ssl
import sys

GROUP_VERSION = "/apis/subresources.kubevirt.io/v1"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the name http.server calls)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == GROUP_VERSION:
            body = {"kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": "subresources.kubevirt.io/v1", "resources": []}
        elif path == GROUP_VERSION + "/version":
            body = {"gitVersion": "v1.8.2", "platform": "linux/amd64"}
        elif path == GROUP_VERSION + "/whoami":
            subject = dict(rdn[0] for rdn in self.connection.getpeercert()["subject"])
            body = {"clientCN": subject.get("commonName"),
                    "user": self.headers.get("X-Remote-User"),
                    "groups": self.headers.get_all("X-Remote-Group") or []}
        else:
            self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                 "reason": "NotFound", "code": 404})
            return
        self.send_json(200, body)

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # noqa: A002 (the signature http.server calls)
        sys.stderr.write("%s %s\n" % (self.command, self.path))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--client-ca", required=True)
    args = parser.parse_args()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    # Only the front proxy may call: the headers are trusted because of this certificate.
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(args.client_ca)

    server = http.server.ThreadingHTTPServer((args.address, 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

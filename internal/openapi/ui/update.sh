#!/bin/bash
# Replaces the embedded Swagger UI with swagger-ui-dist at the version
# below (from the npm registry; run by hand, never at build time), and
# prints the files' checksums for VERSION.
set -euo pipefail
version=5.35.0
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar xzf "swagger-ui-dist-$version.tgz")
p=$tmp/package
cp "$p/swagger-ui-bundle.js" "$p/swagger-ui-bundle.js.LICENSE.txt" "$p/swagger-ui.css" "$p/favicon-32x32.png" "$here/"
cp "$p/LICENSE" "$here/LICENSE.swagger-ui"
cp "$p/NOTICE" "$here/NOTICE.swagger-ui"
{
	echo "swagger-ui-dist $version (npm), files as packaged:"
	(cd "$here" && sha256sum swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css favicon-32x32.png LICENSE.swagger-ui NOTICE.swagger-ui)
} >"$here/VERSION"

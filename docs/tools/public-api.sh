#!/usr/bin/env bash
# Regenerates docs/public-api.md: the public surface of the published JPMS modules (exported packages, public types,
# public methods) of the working tree, and the counts of the baseline commit for comparison. Parses sources only.
# Usage, from the repository root: docs/tools/public-api.sh [BASELINE_COMMIT]   (default 89fca45)
set -euo pipefail
baseline="${1:-89fca45}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
modules=(transfer-engine-engine transfer-engine-reactive)
tool=docs/tools/PublicApi.java
before_dir="$(mktemp -d)"
trap 'rm -rf "$before_dir"' EXIT
git archive "$baseline" | tar -x -C "$before_dir"
before_modules=()
for m in "${modules[@]}"; do
  [[ -f "$before_dir/$m/src/main/java/module-info.java" ]] && before_modules+=("$before_dir/$m")
done
# "Exported packages: 3, public types: 78, public methods: 326" -> "3 | 78 | 326"
counts() { sed -E 's/[^0-9]*([0-9]+)[^0-9]+([0-9]+)[^0-9]+([0-9]+).*/\1 | \2 | \3/' <<<"$1"; }
before="$("$java" "$tool" "${before_modules[@]}" | head -1)"
after_listing="$("$java" "$tool" "${modules[@]}")"
after="$(head -1 <<<"$after_listing")"
{
  cat <<DOC
# Public API

The public surface of transfer-engine: what the published JPMS modules \`dev.transferengine\` (artifact
\`transfer-engine-engine\`) and \`dev.transferengine.reactive\` (\`transfer-engine-reactive\`) export, the public types
in those packages (nested ones included) and their public methods (record components count as their accessors;
constructors, fields and enum constants are left out). Everything else (core, the transports, native access, CUDA)
is internal. The test kit \`transfer-engine-test\` (package \`dev.transferengine.test\`, class path only) is not
counted: it is for transport authors' tests.

Generated from the sources by \`docs/tools/public-api.sh\` (it runs \`docs/tools/PublicApi.java\`, which parses with
javac's tree API and needs no build); regenerate after changing the API:

\`\`\`bash
docs/tools/public-api.sh            # baseline 89fca45, the review of issue 15
\`\`\`

| | exported packages | public types | public methods |
|---|---|---|---|
| before (\`$baseline\`) | $(counts "$before") |
| after (this tree) | $(counts "$after") |

Between the two: the 14 exceptions moved to \`dev.transferengine.exceptions\`, \`MrDesc\` became \`RegionDescriptor\`
and \`NetAddr\` \`NetworkAddress\`, \`postReceives\`/\`receivePool\` became \`postedReceivePool\`/\`creditedReceivePool\`,
\`PeerState\` is new (\`PeerInfo.state()\`), the SPI gained \`UvmWatcherProvider\`, \`UvmWatcherService\` and
\`EngineThreadFactory\`, \`DomainListener\`'s four send/write callbacks became \`onComplete\`/\`onFailed\` and imm
admission one reservation (\`reserveImm(peer, imm)\`, \`releaseImm\`), the builder gained \`clock\` and
\`unexpectedImmTtl\` (with \`EngineConfig.unexpectedImmTtl()\`), and the Reactor facade moved
to its own module; CHANGELOG.md lists each rename old -> new.

## Listing (this tree)

DOC
  printf '%s\n' "$after_listing"
} > docs/public-api.md
echo "docs/public-api.md: before $before; after $after"

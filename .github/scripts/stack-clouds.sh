#!/usr/bin/env bash
# The clouds a Pulumi run of one stack signs in to, and a check that the job has every setting those logins and the
# state backend need, before any of them runs. A workflow step (id: clouds) runs it at the checkout's root after
# `make setup`, with:
#   STACK                        the stack (stacks/Pulumi.<STACK>.yaml)
#   CHECK_ALWAYS, CHECK_AWS,     names of the environment variables each needs (space-separated), besides their values:
#   CHECK_GCP, CHECK_AZURE       CHECK_ALWAYS always, CHECK_<CLOUD> when the run signs in to that cloud
#   HINT                         where to set a missing one, for the error
#   PULUMI_BACKEND_URL           the state backend (its cloud needs credentials whatever the stack deploys to)
# It writes aws, gcp and azure (true or false) to $GITHUB_OUTPUT, for the login steps' `if:`.
set -euo pipefail

# `aiinfra validate` ends with "ok: <stack> (aws, gcp)": the clouds the stack's resources are in.
report=$(uv run --locked aiinfra validate --stack "$STACK")
clouds=$(printf '%s\n' "$report" | sed -n 's/^ok: .* (\(.*\))$/\1/p' | tail -n 1 | tr -d ',')
if [ -z "$clouds" ]; then
  echo "::error::could not read the clouds of stack $STACK from \`aiinfra validate\`: $report"
  exit 1
fi
# The backend and the secrets provider are read with the credentials of their own cloud: an azblob:// backend needs
# the Azure login for a stack that deploys to AWS and GCP only.
case "${PULUMI_BACKEND_URL:-}" in
  s3://*) clouds="$clouds aws" ;;
  gs://*) clouds="$clouds gcp" ;;
  azblob://*) clouds="$clouds azure" ;;
esac
stack_file="stacks/Pulumi.$STACK.yaml"
provider=$(sed -n "s/^secretsprovider:[[:space:]]*[\"']\{0,1\}\([a-z]*\):\/\/.*/\1/p" "$stack_file" 2>/dev/null || true)
case "$provider" in
  awskms) clouds="$clouds aws" ;;
  gcpkms) clouds="$clouds gcp" ;;
  azurekeyvault) clouds="$clouds azure" ;;
esac

missing=""
for name in ${CHECK_ALWAYS:-}; do
  if [ -z "${!name:-}" ]; then missing="$missing $name"; fi
done
used=""
for cloud in aws gcp azure; do
  if [[ " $clouds " == *" $cloud "* ]]; then
    used="$used $cloud"
    names="CHECK_${cloud^^}"
    for name in ${!names:-}; do
      if [ -z "${!name:-}" ]; then missing="$missing $name"; fi
    done
    echo "$cloud=true" >> "$GITHUB_OUTPUT"
  else
    echo "$cloud=false" >> "$GITHUB_OUTPUT"
  fi
done
if [ -n "$missing" ]; then
  echo "::error::stack $STACK signs in to${used}: set$missing $HINT"
  exit 1
fi
echo "stack $STACK signs in to${used}"

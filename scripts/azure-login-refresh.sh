#!/usr/bin/env bash
# Keeps the Azure CLI logged in for the life of a GitHub Actions job (.github/workflows: pulumi-up.yml, preview.yml).
#
# azure/login hands `az login --federated-token` one GitHub OIDC token, valid for 5 to 10 minutes, and the Azure CLI
# cannot fetch another (Azure/azure-cli#28708, Azure/login#180). Once its first access tokens age out (or a new
# resource is asked for), the next `az account get-access-token` fails with AADSTS700024: kubelogin's for the AKS
# kubeconfigs (`--login azurecli`), and the azblob:// backend's and azurekeyvault:// provider's, mid-run. So log in
# again with a fresh token every 4 minutes, in the background, until the job's last step.
#
#   start  (right after azure/login; env CLIENT_ID, TENANT_ID, SUBSCRIPTION_ID) starts the loop in its own process group
#   stop   (the job's last step, `if: always()`, before azure/login's own cleanup) ends it and prints its log
set -u
pidfile="$RUNNER_TEMP/azure-login-refresh.pid"
logfile="$RUNNER_TEMP/azure-login-refresh.log"
case "${1:-}" in
  start)
    setsid "$0" loop > "$logfile" 2>&1 < /dev/null &
    ;;
  loop)
    set -o pipefail
    echo $$ > "$pidfile"  # it leads its own process group (setsid above)
    while sleep 240; do
      # The audience azure/login asks for (api://AzureADTokenExchange), URL-encoded.
      if token=$(curl -sSf --retry 3 -H "Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" \
                   "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=api%3A%2F%2FAzureADTokenExchange" |
                 python3 -c 'import json, sys; print(json.load(sys.stdin)["value"])') &&
         az login --service-principal --username "$CLIENT_ID" --tenant "$TENANT_ID" \
           --federated-token "$token" --output none &&
         az account set --subscription "$SUBSCRIPTION_ID"; then
        echo "$(date -u +%H:%M:%S) logged in again"
      else
        echo "$(date -u +%H:%M:%S) could not log in again; next try in 4 minutes"
      fi
    done
    ;;
  stop)
    if [ -f "$pidfile" ]; then
      kill -- "-$(cat "$pidfile")" 2>/dev/null || true  # the loop's process group: it and its sleep, curl or az
      cat "$logfile"
    fi
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac

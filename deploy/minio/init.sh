#!/bin/sh
# The compose `minio-init` job (minio/mc): with the root credentials, creates the bucket, a policy
# limited to it and the app's own access key holding that policy. API and worker only ever get
# the app key. Idempotent: safe on every `docker compose up`.
set -eu
mc alias set local http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null
mc mb --ignore-existing "local/$S3_BUCKET"
cat > /tmp/app-policy.json <<POLICY
{
  "Version": "2012-10-17",
  "Statement": [
    { "Effect": "Allow", "Action": ["s3:GetBucketLocation", "s3:ListBucket"], "Resource": ["arn:aws:s3:::$S3_BUCKET"] },
    { "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"], "Resource": ["arn:aws:s3:::$S3_BUCKET/*"] }
  ]
}
POLICY
mc admin policy create local contact-api-app /tmp/app-policy.json
mc admin user add local "$MINIO_APP_ACCESS_KEY" "$MINIO_APP_SECRET_KEY"
# Attaching a policy the user holds already is an error; that one is expected on a re-run.
mc admin policy attach local contact-api-app --user "$MINIO_APP_ACCESS_KEY" 2>/dev/null || echo "policy already attached"
echo "minio ready: bucket $S3_BUCKET, user $MINIO_APP_ACCESS_KEY"

/* keys.h: the Redis key layout, in one place.
 *
 * Everything a workspace owns carries the hash tag {ws:<id>} so that every
 * multi-key script touches one slot (Redis Cluster). The unscoped fleet is the
 * workspace "" ({ws:}). A sandbox of workspace W placed on a worker of pool P
 * lives in W's slot; the worker's bookkeeping of it lives in P's slot. */
#ifndef CORRAL_KEYS_H
#define CORRAL_KEYS_H

#define K_WORKSPACES "corral:workspaces"    /* set of workspace ids */
#define K_JT_INDEX "corral:jtws:%s"         /* join token id -> workspace */
#define K_SB_INDEX "corral:sbws:%s"         /* sandbox id -> workspace (data-plane lookup) */
#define K_WS_INFO "corral:{ws:%s}:info"     /* hash: name, max_concurrent, created_at */
#define K_WS_KEYS "corral:{ws:%s}:keys"     /* set of API key ids */
#define K_APIKEY "corral:{ws:%s}:apikey:%s" /* hash: mac, role, created_at */
#define K_WS_JTS "corral:{ws:%s}:jts"       /* set of join token ids */
#define K_JOINTOKEN "corral:{ws:%s}:jt:%s"  /* hash: mac, expires_at, revoked */
#define K_SB "corral:{ws:%s}:sb:%s"         /* hash: one sandbox */
#define K_SBS "corral:{ws:%s}:sbs"          /* set of sandbox ids */
#define K_SB_METRICS "corral:{ws:%s}:sb:%s:metrics" /* zset: a sandbox's samples by time (ms) */
#define K_SB_LOGS "corral:{ws:%s}:sb:%s:logs"       /* zset: a sandbox's log lines by time (ms) */
#define K_ACTIVE "corral:{ws:%s}:active"     /* zset: admission, sandbox -> reservation deadline */
#define K_TIMEOUTS "corral:{ws:%s}:timeouts" /* zset: sandbox -> kill deadline (ms) */
#define K_PENDING "corral:{ws:%s}:pending"   /* zset: sandbox -> create deadline (ms) */
#define K_READY "corral:{ws:%s}:ready:%s"    /* list: wakes the handler waiting on a create */
#define K_WAITERS "corral:{ws:%s}:waiters"   /* zset: create -> its waiting handler's lease (ms) */
#define K_IDEM "corral:{ws:%s}:idem:%s"      /* string: Idempotency-Key -> "sbid:fingerprint" */
#define K_RATE "corral:{ws:%s}:rate:%s:%s"   /* string: (ck|jn|vt, id) full again at (us) */
#define K_WORKERS "corral:{ws:%s}:workers"   /* zset: live workers by load (placement) */
#define K_WORKERS_ALL "corral:{ws:%s}:wkall" /* set: every worker of the pool, live or dead */
#define K_LEASES "corral:{ws:%s}:leases"     /* zset: worker -> lease deadline (ms) */
#define K_WORKER "corral:{ws:%s}:worker:%s"  /* hash: capabilities, usage, lease, secret mac */
#define K_WORKER_SBS "corral:{ws:%s}:worker:%s:sbs"          /* hash: sandbox -> its workspace */
#define K_WORKER_CMDS "corral:{ws:%s}:worker:%s:cmds"        /* stream of commands */
#define K_WORKER_KILLED "corral:{ws:%s}:worker:%s:killed:%s" /* list: wakes a kill's caller */
#define K_WORKER_KILL_WAIT "corral:{ws:%s}:worker:%s:killwait:%s" /* string: a caller waits */
#define K_WORKER_TUNNEL "corral:{ws:%s}:worker:%s:tunnel" /* string: the daemon port holding its tunnel */
#define K_AUDIT "corral:{ws:%s}:audit"         /* stream: the audit trail ({ws:}: the operator's) */
#define K_SNAPSHOT "corral:{ws:%s}:snap:%s"    /* hash: one snapshot (decision 0048) */
#define K_SNAPSHOTS "corral:{ws:%s}:snaps"     /* zset: snapshot ids by creation time (ms) */
#define K_TPL "corral:{ws:%s}:tpl:%s"          /* hash: one template (docs/templates.md) */
#define K_TPLS "corral:{ws:%s}:tpls"           /* zset: template ids by creation (ms) */
#define K_TPL_NAMES "corral:{ws:%s}:tplnames"  /* hash: template name -> id */
#define K_TPL_TAGS "corral:{ws:%s}:tpltags:%s" /* hash: a template's tag -> "build created_at" */
#define K_TPL_BUILDS "corral:{ws:%s}:tplbuilds:%s" /* zset: a template's build ids by creation */
#define K_BLD "corral:{ws:%s}:bld:%s"              /* hash: one build */
#define K_BLD_LOGS "corral:{ws:%s}:bldlogs:%s"     /* list: a build's log entries (JSON) */
#define K_BLD_INDEX "corral:bldws:%s"              /* build id -> workspace (worker routes) */
#define K_BLD_ACTIVE "corral:{ws:%s}:bldactive"    /* zset: builds in progress, by start (ms) */
#define K_REG_GC "corral:{registry}:gc"            /* string: a garbage collection holds pushes */
#define K_REG_PUSHES "corral:{registry}:pushes" /* zset: build id -> its push token's expiry (s)   \
                                                 */
#define K_TPL_FILE "corral:{ws:%s}:tplfile:%s"  /* string: a COPY step's uploaded tar */
#define K_TPL_BYTES                                                                                \
    "corral:{ws:%s}:tplbytes" /* string: bytes uploaded, kept as the files are (24 h) */
#define K_TPL_UPLOAD "corral:{ws:%s}:tplup:%s" /* string: an upload URL's nonce, once used */
#define K_VOLUME "corral:{ws:%s}:vol:%s"       /* hash: one volume (decision 0049) */
#define K_VOLUMES "corral:{ws:%s}:vols"        /* hash: volume name -> id */
#define K_SECRET "corral:{ws:%s}:secret:%s"    /* hash: one secret, its sealed versions (0090) */
#define K_SECRETS "corral:{ws:%s}:secrets"     /* zset: secret ids by creation (ms) */
#define K_SECRET_NAMES "corral:{ws:%s}:secretnames" /* hash: secret name -> id */
#define K_IDKEYS "corral:{ws:%s}:idkeys"          /* hash: identity key kid -> its record (0090) */
#define K_IDKEY_CURRENT "corral:{ws:%s}:idkey"    /* string: the kid that signs */
#define K_IDKEY_RETIRED "corral:{ws:%s}:idkeyold" /* zset: kid -> out of the JWKS at (ms) */

#define CMD_GROUP "workerd"
#define CMD_CONSUMER "w"

#endif

/* token.h: the shape of Corral's bearer credentials.
 *
 *   API key     e2b_1<LL><workspace><LL><keyid><secret>   (issued since decision 0038)
 *               ck_<workspace>_<keyid>_<secret>           (older keys, still accepted)
 *   join token  jn_<workspace>_<tokenid>_<secret>    (<workspace> empty: unscoped fleet)
 *
 * The e2b_ spelling is all lowercase hex after the prefix, so E2B SDKs that check
 * ^e2b_[0-9a-f]+$ accept it: "1" is the spelling's version, each <LL> is two hex
 * digits giving the length (1..32) of the id after it, and the secret is the rest.
 * Both spellings of one key parse to the same record.
 *
 * The workspace and id are not secret: they say which Redis slot holds the
 * record, so a lookup touches one hash-tagged key. Only <secret> is secret; it is
 * stored as an HMAC and compared in constant time. */
#ifndef CORRAL_TOKEN_H
#define CORRAL_TOKEN_H

#define TOKEN_WS_MAX 33
#define TOKEN_ID_MAX 33
#define TOKEN_SECRET_MAX 65

/* TOKEN_VOLUME is a volume file API token (handlers/volume_token.h): never
 * what token_parse answers, set by the router once one verified (ws, and the
 * volume's id in id). */
enum token_kind { TOKEN_INVALID = 0, TOKEN_API_KEY, TOKEN_JOIN, TOKEN_VOLUME };

struct token {
    enum token_kind kind;
    char ws[TOKEN_WS_MAX];
    char id[TOKEN_ID_MAX];
    char secret[TOKEN_SECRET_MAX];
};

/* Parses a credential; kind is TOKEN_INVALID when the text has neither shape. */
void token_parse(const char *text, struct token *out);

/* Writes an API key in the e2b_ spelling, a join token as "jn_<ws>_<id>_<secret>",
 * into out (at least TOKEN_TEXT_MAX bytes). ws and id are 1..32 hex (a join
 * token's ws may be empty), secret 1..64 hex. */
#define TOKEN_TEXT_MAX (5 + 2 + TOKEN_WS_MAX + 2 + TOKEN_ID_MAX + TOKEN_SECRET_MAX)
void token_format(enum token_kind kind, const char *ws, const char *id, const char *secret,
                  char *out);

/* 1 when s is 1..32 lowercase hex digits (workspace, key and token ids). */
int token_is_id(const char *s);

#endif

/*
 * offline.h — attnd's answers without HTTP: `attnd run PATH` and `attnd
 * grade` hand one request, read from stdin, to the api layer in-process
 * (api_handle, exactly as the daemon does) and write the body of its
 * answer to stdout, byte for byte the body an HTTP client gets. For
 * graders in sandboxes without a network (PrairieLearn's external
 * graders, Gradescope's autograders): docs/offline.md. `attnd grade
 * --question DIR` grades one question's submissions with the settings
 * and request of its folder (DIR/question.json, DIR/request.json).
 */
#ifndef SRV_OFFLINE_H
#define SRV_OFFLINE_H

/* Exit statuses of attnd run and attnd grade (docs/offline.md). */
enum {
    SRV_OFFLINE_OK = 0,      /* a 2xx answer, on stdout */
    SRV_OFFLINE_USAGE = 1,   /* bad arguments, or stdin/stdout failed */
    SRV_OFFLINE_PROBLEM = 2, /* a 4xx/5xx answer: its body on stderr */
    SRV_OFFLINE_UNGRADED = 3 /* attnd grade: some submissions answered
                                with a problem of their own */
};

/* 1 when arg names an offline command ("run", "grade" or "variants"),
 * else 0. */
int srv_offline_command(const char *arg);

/* Run the offline command argv[0] ("run" or "grade") with its arguments
 * argv[1..argc-1]. Messages go to stderr, prefixed "attnd run:" or "attnd
 * grade:". Returns one of SRV_OFFLINE_*. */
int srv_offline_main(int argc, char **argv);

#endif /* SRV_OFFLINE_H */

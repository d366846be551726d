/*
 * json_tree.h — what jansson's tree of a JSON text takes in memory,
 * counted from the text alone, so that a body can be charged to the
 * memory budget (and refused) before the tree is built: a 16 MiB body of
 * [{},{},…] is a 1.3 GB tree.
 */
#ifndef API_JSON_TREE_H
#define API_JSON_TREE_H

#include <stddef.h>
#include <stdint.h>

/* The bytes jansson allocates for the tree of the JSON text s[0 .. len),
 * counted without building it: per object, array, member, number, string
 * (and its bytes) and literal, measured with jansson 2.14 on glibc
 * (docs/contract.md "Sharing one server"). An upper estimate for any
 * text, valid or not (jansson stops at an error, having built less). */
uint64_t api_json_tree_bytes(const char *s, size_t len);

#endif /* API_JSON_TREE_H */

/*
 * dynlib-git2.h: libgit2, loaded when first used.
 *
 * holt-full links neither libcurl nor libgit2. Loading them maps some forty
 * libraries (OpenSSL, GnuTLS, mbed TLS, Kerberos, LDAP, ...) and relocating
 * those makes about 6 MB resident in every process that has them, the idle
 * server's included, though it has made no request and touched no
 * repository. A file that calls libgit2 includes this header after
 * <git2.h>: each function listed below is then a macro reading its
 * address from a table that dlopen and dlsym fill on first use, once per
 * process (dynlib.c). The cost is an indirect call.
 *
 * A libgit2 function missing from this list fails to link ("undefined
 * reference to ..."): add it to both the X() list and the #define lines.
 *
 * Call order: dynlib_load_git2 loads the library or returns -1 with *cause;
 * call it where a failure can be reported. Any listed function loads it too,
 * and exits the process (fatal) if it cannot. Load it before forking a child
 * that cannot reach the library's files (a chroot). Thread-safe.
 */
#ifndef DYNLIB_GIT2_H
#define DYNLIB_GIT2_H

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#ifndef HOLT_LIBGIT2_SONAME
#define HOLT_LIBGIT2_SONAME	"libgit2.so." LIBGIT2_SOVERSION
#endif

#define DYNLIB_GIT2_FUNCS \
	X(git_blob_free) \
	X(git_blob_lookup) \
	X(git_blob_rawcontent) \
	X(git_blob_rawsize) \
	X(git_buf_dispose) \
	X(git_clone) \
	X(git_commit_create) \
	X(git_commit_create_v) \
	X(git_commit_free) \
	X(git_commit_id) \
	X(git_commit_lookup) \
	X(git_commit_parent_id) \
	X(git_commit_parentcount) \
	X(git_commit_tree) \
	X(git_commit_tree_id) \
	X(git_config_add_file_ondisk) \
	X(git_config_free) \
	X(git_config_get_string_buf) \
	X(git_config_new) \
	X(git_config_open_ondisk) \
	X(git_config_snapshot) \
	X(git_credential_ssh_key_from_agent) \
	X(git_credential_username_new) \
	X(git_credential_userpass_plaintext_new) \
	X(git_diff_buffers) \
	X(git_diff_find_similar) \
	X(git_diff_free) \
	X(git_diff_get_delta) \
	X(git_diff_num_deltas) \
	X(git_diff_tree_to_workdir_with_index) \
	X(git_error_last) \
	X(git_error_set_str) \
	X(git_graph_descendant_of) \
	X(git_index_add) \
	X(git_index_add_all) \
	X(git_index_add_bypath) \
	X(git_index_free) \
	X(git_index_remove_bypath) \
	X(git_index_update_all) \
	X(git_index_write) \
	X(git_index_write_tree) \
	X(git_libgit2_init) \
	X(git_libgit2_opts) \
	X(git_object_free) \
	X(git_object_peel) \
	X(git_odb_add_backend) \
	X(git_odb_backend_data_alloc) \
	X(git_odb_free) \
	X(git_odb_write_pack) \
	X(git_oid_cpy) \
	X(git_oid_equal) \
	X(git_oid_fromstr) \
	X(git_oid_tostr) \
	X(git_packbuilder_foreach) \
	X(git_packbuilder_free) \
	X(git_packbuilder_insert_walk) \
	X(git_packbuilder_new) \
	X(git_patch_free) \
	X(git_patch_from_diff) \
	X(git_patch_get_delta) \
	X(git_patch_get_hunk) \
	X(git_patch_get_line_in_hunk) \
	X(git_patch_line_stats) \
	X(git_patch_num_hunks) \
	X(git_patch_print) \
	X(git_reference_create) \
	X(git_reference_free) \
	X(git_reference_is_branch) \
	X(git_reference_is_valid_name) \
	X(git_reference_list) \
	X(git_reference_lookup) \
	X(git_reference_name) \
	X(git_reference_name_to_id) \
	X(git_reference_set_target) \
	X(git_reference_shorthand) \
	X(git_reference_symbolic_target) \
	X(git_reference_target) \
	X(git_reference_type) \
	X(git_remote_create_with_opts) \
	X(git_remote_free) \
	X(git_remote_lookup) \
	X(git_remote_push) \
	X(git_remote_url) \
	X(git_repository_free) \
	X(git_repository_head) \
	X(git_repository_head_detached) \
	X(git_repository_head_unborn) \
	X(git_repository_commondir) \
	X(git_repository_index) \
	X(git_repository_init) \
	X(git_repository_is_bare) \
	X(git_repository_odb) \
	X(git_repository_open_ext) \
	X(git_repository_path) \
	X(git_repository_set_config) \
	X(git_repository_set_head_detached) \
	X(git_repository_set_workdir) \
	X(git_repository_workdir) \
	X(git_revparse_single) \
	X(git_revwalk_free) \
	X(git_revwalk_hide) \
	X(git_revwalk_new) \
	X(git_revwalk_push) \
	X(git_signature_free) \
	X(git_signature_now) \
	X(git_status_byindex) \
	X(git_status_list_entrycount) \
	X(git_status_list_free) \
	X(git_status_list_new) \
	X(git_status_options_init) \
	X(git_strarray_dispose) \
	X(git_tree_entry_bypath) \
	X(git_tree_entry_filemode) \
	X(git_tree_entry_free) \
	X(git_tree_entry_id) \
	X(git_tree_free) \
	X(git_tree_lookup)

#define X(f) __typeof__(&f) f;
struct dynlib_git2_fns {
	DYNLIB_GIT2_FUNCS
};
#undef X

int	 dynlib_load_git2(char **cause);
const struct dynlib_git2_fns *dynlib_git2(void);

#define DYNLIB_GIT2(f)	(dynlib_git2()->f)

#define git_blob_free DYNLIB_GIT2(git_blob_free)
#define git_blob_lookup DYNLIB_GIT2(git_blob_lookup)
#define git_blob_rawcontent DYNLIB_GIT2(git_blob_rawcontent)
#define git_blob_rawsize DYNLIB_GIT2(git_blob_rawsize)
#define git_buf_dispose DYNLIB_GIT2(git_buf_dispose)
#define git_clone DYNLIB_GIT2(git_clone)
#define git_commit_create DYNLIB_GIT2(git_commit_create)
#define git_commit_create_v DYNLIB_GIT2(git_commit_create_v)
#define git_commit_free DYNLIB_GIT2(git_commit_free)
#define git_commit_id DYNLIB_GIT2(git_commit_id)
#define git_commit_lookup DYNLIB_GIT2(git_commit_lookup)
#define git_commit_parent_id DYNLIB_GIT2(git_commit_parent_id)
#define git_commit_parentcount DYNLIB_GIT2(git_commit_parentcount)
#define git_commit_tree DYNLIB_GIT2(git_commit_tree)
#define git_commit_tree_id DYNLIB_GIT2(git_commit_tree_id)
#define git_config_add_file_ondisk DYNLIB_GIT2(git_config_add_file_ondisk)
#define git_config_free DYNLIB_GIT2(git_config_free)
#define git_config_get_string_buf DYNLIB_GIT2(git_config_get_string_buf)
#define git_config_new DYNLIB_GIT2(git_config_new)
#define git_config_open_ondisk DYNLIB_GIT2(git_config_open_ondisk)
#define git_config_snapshot DYNLIB_GIT2(git_config_snapshot)
#define git_credential_ssh_key_from_agent DYNLIB_GIT2(git_credential_ssh_key_from_agent)
#define git_credential_username_new DYNLIB_GIT2(git_credential_username_new)
#define git_credential_userpass_plaintext_new DYNLIB_GIT2(git_credential_userpass_plaintext_new)
#define git_diff_buffers DYNLIB_GIT2(git_diff_buffers)
#define git_diff_find_similar DYNLIB_GIT2(git_diff_find_similar)
#define git_diff_free DYNLIB_GIT2(git_diff_free)
#define git_diff_get_delta DYNLIB_GIT2(git_diff_get_delta)
#define git_diff_num_deltas DYNLIB_GIT2(git_diff_num_deltas)
#define git_diff_tree_to_workdir_with_index DYNLIB_GIT2(git_diff_tree_to_workdir_with_index)
#define git_error_last DYNLIB_GIT2(git_error_last)
#define git_error_set_str DYNLIB_GIT2(git_error_set_str)
#define git_graph_descendant_of DYNLIB_GIT2(git_graph_descendant_of)
#define git_index_add DYNLIB_GIT2(git_index_add)
#define git_index_add_all DYNLIB_GIT2(git_index_add_all)
#define git_index_add_bypath DYNLIB_GIT2(git_index_add_bypath)
#define git_index_free DYNLIB_GIT2(git_index_free)
#define git_index_remove_bypath DYNLIB_GIT2(git_index_remove_bypath)
#define git_index_update_all DYNLIB_GIT2(git_index_update_all)
#define git_index_write DYNLIB_GIT2(git_index_write)
#define git_index_write_tree DYNLIB_GIT2(git_index_write_tree)
#define git_libgit2_init DYNLIB_GIT2(git_libgit2_init)
#define git_libgit2_opts DYNLIB_GIT2(git_libgit2_opts)
#define git_object_free DYNLIB_GIT2(git_object_free)
#define git_object_peel DYNLIB_GIT2(git_object_peel)
#define git_odb_add_backend DYNLIB_GIT2(git_odb_add_backend)
#define git_odb_backend_data_alloc DYNLIB_GIT2(git_odb_backend_data_alloc)
#define git_odb_free DYNLIB_GIT2(git_odb_free)
#define git_odb_write_pack DYNLIB_GIT2(git_odb_write_pack)
#define git_oid_cpy DYNLIB_GIT2(git_oid_cpy)
#define git_oid_equal DYNLIB_GIT2(git_oid_equal)
#define git_oid_fromstr DYNLIB_GIT2(git_oid_fromstr)
#define git_oid_tostr DYNLIB_GIT2(git_oid_tostr)
#define git_packbuilder_foreach DYNLIB_GIT2(git_packbuilder_foreach)
#define git_packbuilder_free DYNLIB_GIT2(git_packbuilder_free)
#define git_packbuilder_insert_walk DYNLIB_GIT2(git_packbuilder_insert_walk)
#define git_packbuilder_new DYNLIB_GIT2(git_packbuilder_new)
#define git_patch_free DYNLIB_GIT2(git_patch_free)
#define git_patch_from_diff DYNLIB_GIT2(git_patch_from_diff)
#define git_patch_get_delta DYNLIB_GIT2(git_patch_get_delta)
#define git_patch_get_hunk DYNLIB_GIT2(git_patch_get_hunk)
#define git_patch_get_line_in_hunk DYNLIB_GIT2(git_patch_get_line_in_hunk)
#define git_patch_line_stats DYNLIB_GIT2(git_patch_line_stats)
#define git_patch_num_hunks DYNLIB_GIT2(git_patch_num_hunks)
#define git_patch_print DYNLIB_GIT2(git_patch_print)
#define git_reference_create DYNLIB_GIT2(git_reference_create)
#define git_reference_free DYNLIB_GIT2(git_reference_free)
#define git_reference_is_branch DYNLIB_GIT2(git_reference_is_branch)
#define git_reference_is_valid_name DYNLIB_GIT2(git_reference_is_valid_name)
#define git_reference_list DYNLIB_GIT2(git_reference_list)
#define git_reference_lookup DYNLIB_GIT2(git_reference_lookup)
#define git_reference_name DYNLIB_GIT2(git_reference_name)
#define git_reference_name_to_id DYNLIB_GIT2(git_reference_name_to_id)
#define git_reference_set_target DYNLIB_GIT2(git_reference_set_target)
#define git_reference_shorthand DYNLIB_GIT2(git_reference_shorthand)
#define git_reference_symbolic_target DYNLIB_GIT2(git_reference_symbolic_target)
#define git_reference_target DYNLIB_GIT2(git_reference_target)
#define git_reference_type DYNLIB_GIT2(git_reference_type)
#define git_remote_create_with_opts DYNLIB_GIT2(git_remote_create_with_opts)
#define git_remote_free DYNLIB_GIT2(git_remote_free)
#define git_remote_lookup DYNLIB_GIT2(git_remote_lookup)
#define git_remote_push DYNLIB_GIT2(git_remote_push)
#define git_remote_url DYNLIB_GIT2(git_remote_url)
#define git_repository_free DYNLIB_GIT2(git_repository_free)
#define git_repository_head DYNLIB_GIT2(git_repository_head)
#define git_repository_head_detached DYNLIB_GIT2(git_repository_head_detached)
#define git_repository_head_unborn DYNLIB_GIT2(git_repository_head_unborn)
#define git_repository_commondir DYNLIB_GIT2(git_repository_commondir)
#define git_repository_index DYNLIB_GIT2(git_repository_index)
#define git_repository_init DYNLIB_GIT2(git_repository_init)
#define git_repository_is_bare DYNLIB_GIT2(git_repository_is_bare)
#define git_repository_odb DYNLIB_GIT2(git_repository_odb)
#define git_repository_open_ext DYNLIB_GIT2(git_repository_open_ext)
#define git_repository_path DYNLIB_GIT2(git_repository_path)
#define git_repository_set_config DYNLIB_GIT2(git_repository_set_config)
#define git_repository_set_head_detached DYNLIB_GIT2(git_repository_set_head_detached)
#define git_repository_set_workdir DYNLIB_GIT2(git_repository_set_workdir)
#define git_repository_workdir DYNLIB_GIT2(git_repository_workdir)
#define git_revparse_single DYNLIB_GIT2(git_revparse_single)
#define git_revwalk_free DYNLIB_GIT2(git_revwalk_free)
#define git_revwalk_hide DYNLIB_GIT2(git_revwalk_hide)
#define git_revwalk_new DYNLIB_GIT2(git_revwalk_new)
#define git_revwalk_push DYNLIB_GIT2(git_revwalk_push)
#define git_signature_free DYNLIB_GIT2(git_signature_free)
#define git_signature_now DYNLIB_GIT2(git_signature_now)
#define git_status_byindex DYNLIB_GIT2(git_status_byindex)
#define git_status_list_entrycount DYNLIB_GIT2(git_status_list_entrycount)
#define git_status_list_free DYNLIB_GIT2(git_status_list_free)
#define git_status_list_new DYNLIB_GIT2(git_status_list_new)
#define git_status_options_init DYNLIB_GIT2(git_status_options_init)
#define git_strarray_dispose DYNLIB_GIT2(git_strarray_dispose)
#define git_tree_entry_bypath DYNLIB_GIT2(git_tree_entry_bypath)
#define git_tree_entry_filemode DYNLIB_GIT2(git_tree_entry_filemode)
#define git_tree_entry_free DYNLIB_GIT2(git_tree_entry_free)
#define git_tree_entry_id DYNLIB_GIT2(git_tree_entry_id)
#define git_tree_free DYNLIB_GIT2(git_tree_free)
#define git_tree_lookup DYNLIB_GIT2(git_tree_lookup)

#endif

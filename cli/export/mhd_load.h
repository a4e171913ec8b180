/* mhd_load.h - libmicrohttpd, loaded by `pagemap serve` only (see mhd_load.c). */
#ifndef PAGEMAP_CLI_MHD_LOAD_H
#define PAGEMAP_CLI_MHD_LOAD_H

#include <microhttpd.h>

/* The calls serve makes, resolved at run time. */
struct mhd_api {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *daemon);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type,
						       ...);
	const char *(*lookup_connection_value)(struct MHD_Connection *connection, enum MHD_ValueKind kind,
					       const char *key);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *response, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *connection, unsigned int status_code,
					  struct MHD_Response *response);
	void (*destroy_response)(struct MHD_Response *response);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *connection,
							       enum MHD_ConnectionInfoType info_type, ...);
};

/*
 * Load libmicrohttpd and fill @api. 0, or -1 with a one-line reason in
 * @why (the library's name and dlerror()'s text).
 */
int mhd_load(struct mhd_api *api, char *why, size_t size);

#endif

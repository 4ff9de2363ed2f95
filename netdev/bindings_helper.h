/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers for atl1c_rs's module-local bindings (netdev/bindings_generated.rs): the networking
 * API that the kernel crate's own bindings leave out or keep opaque.
 */
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <linux/ethtool.h>
#include <linux/dma-mapping.h>
#include <linux/skbuff.h>
#include <linux/if_vlan.h>
#include <linux/mii.h>
#include <linux/dim.h>
#include <net/netdev_queues.h>
#include <net/page_pool/types.h>

#include "helpers.h"

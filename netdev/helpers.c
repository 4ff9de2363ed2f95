// SPDX-License-Identifier: GPL-2.0
/*
 * C side of atl1c_rs's netdev layer: the layout table the Rust side checks its generated
 * bindings against (netdev/mod.rs, KUnit suite atl1c_rs_layout).
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/stddef.h>
#include <net/page_pool/helpers.h>

#include "helpers.h"

const size_t atl1c_rs_layout[ATL1C_RS_LAYOUT_COUNT] = {
	[ATL1C_RS_NET_DEVICE_SIZE] = sizeof(struct net_device),
	[ATL1C_RS_NET_DEVICE_ALIGN] = __alignof__(struct net_device),
	[ATL1C_RS_NET_DEVICE_NETDEV_OPS] = offsetof(struct net_device, netdev_ops),
	[ATL1C_RS_NET_DEVICE_ETHTOOL_OPS] = offsetof(struct net_device, ethtool_ops),
	[ATL1C_RS_NET_DEVICE_FLAGS] = offsetof(struct net_device, flags),
	[ATL1C_RS_NET_DEVICE_FEATURES] = offsetof(struct net_device, features),
	[ATL1C_RS_NET_DEVICE_HW_FEATURES] = offsetof(struct net_device, hw_features),
	[ATL1C_RS_NET_DEVICE_MTU] = offsetof(struct net_device, mtu),
	[ATL1C_RS_NET_DEVICE_MIN_MTU] = offsetof(struct net_device, min_mtu),
	[ATL1C_RS_NET_DEVICE_MAX_MTU] = offsetof(struct net_device, max_mtu),
	[ATL1C_RS_NET_DEVICE_WATCHDOG_TIMEO] = offsetof(struct net_device, watchdog_timeo),
	[ATL1C_RS_NET_DEVICE_DEV] = offsetof(struct net_device, dev),
	[ATL1C_RS_NET_DEVICE_NUM_TX_QUEUES] = offsetof(struct net_device, num_tx_queues),
	[ATL1C_RS_NET_DEVICE_REAL_NUM_TX_QUEUES] = offsetof(struct net_device, real_num_tx_queues),
	[ATL1C_RS_NAPI_STRUCT_SIZE] = sizeof(struct napi_struct),
	[ATL1C_RS_SK_BUFF_LEN] = offsetof(struct sk_buff, len),
	[ATL1C_RS_SK_BUFF_DATA] = offsetof(struct sk_buff, data),
	[ATL1C_RS_SK_BUFF_SIZE] = sizeof(struct sk_buff),
};

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <net/ip6_checksum.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/netdev_queues.h>
#include <linux/ethtool.h>
#include <linux/pm_wakeup.h>

void atl1c_rs_skb_info(struct sk_buff *skb, struct atl1c_rs_skb_info *info)
{
	info->len = skb->len;
	info->headlen = skb_headlen(skb);
	info->nr_frags = skb_shinfo(skb)->nr_frags;
	info->gso_size = skb_is_gso(skb) ? skb_shinfo(skb)->gso_size : 0;
	info->gso_type = skb_shinfo(skb)->gso_type;
	info->ip_summed = skb->ip_summed;
	info->csum_start = skb->ip_summed == CHECKSUM_PARTIAL ? skb_checksum_start_offset(skb) : 0;
	info->csum_offset = skb->ip_summed == CHECKSUM_PARTIAL ? skb->csum_offset : 0;
	/* Only a GSO skb is sure to have a transport header (an ARP request has none). */
	info->transport_offset = skb_is_gso(skb) ? skb_transport_offset(skb) : 0;
	info->network_offset = skb_network_offset(skb);
	info->tcp_all_headers = skb_is_gso(skb) ? skb_tcp_all_headers(skb) : 0;
	info->vlan_present = skb_vlan_tag_present(skb);
	info->vlan_tci = skb_vlan_tag_get(skb);
	info->queue = skb_get_queue_mapping(skb);
	info->gso_segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
}

/* The header rewrite atl1c_tso_csum does before handing a GSO skb to the hardware. */
int atl1c_rs_skb_tso_prep(struct sk_buff *skb)
{
	int err = skb_cow_head(skb, 0);

	if (err < 0)
		return err;
	if (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4) {
		struct iphdr *iph = ip_hdr(skb);
		u32 real_len = skb_network_offset(skb) + ntohs(iph->tot_len);

		if (real_len < skb->len) {
			err = pskb_trim(skb, real_len);
			if (err)
				return err;
		}
		iph = ip_hdr(skb);
		iph->check = 0;
		tcp_hdr(skb)->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, 0, IPPROTO_TCP, 0);
	} else if (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV6) {
		ipv6_hdr(skb)->payload_len = 0;
		tcp_v6_gso_csum_prep(skb);
	}
	return 0;
}

unsigned long long atl1c_rs_features_check(struct sk_buff *skb, unsigned long long features,
					   u32 max_gso_size)
{
	if (skb_is_gso(skb) && skb_shinfo(skb)->gso_size > max_gso_size)
		features &= ~NETIF_F_GSO_MASK;
	return vlan_features_check(skb, features);
}

int atl1c_rs_skb_map_frag(struct device *dev, struct sk_buff *skb, u32 i, dma_addr_t *addr,
			  u32 *size)
{
	skb_frag_t *frag;

	if (i >= skb_shinfo(skb)->nr_frags)
		return -EINVAL;
	frag = &skb_shinfo(skb)->frags[i];
	*size = skb_frag_size(frag);
	*addr = skb_frag_dma_map(dev, frag, 0, *size, DMA_TO_DEVICE);
	return dma_mapping_error(dev, *addr) ? -ENOMEM : 0;
}

int atl1c_rs_skb_map_linear(struct device *dev, struct sk_buff *skb, u32 off, u32 len,
			    enum dma_data_direction dir, dma_addr_t *addr)
{
	u32 room = skb_headlen(skb) + skb_tailroom(skb);

	if (!len || off > room || len > room - off)
		return -EINVAL;
	*addr = dma_map_single(dev, skb->data + off, len, dir);
	return dma_mapping_error(dev, *addr) ? -ENOMEM : 0;
}

void atl1c_rs_skb_set_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

void atl1c_rs_skb_set_vlan(struct sk_buff *skb, u16 tci)
{
	__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q), tci);
}

int atl1c_rs_mc_list(struct net_device *dev, u8 *out, int max)
{
	struct netdev_hw_addr *ha;
	int n = 0;

	netdev_for_each_mc_addr(ha, dev) {
		if (n == max)
			return -E2BIG;
		memcpy(out + n * ETH_ALEN, ha->addr, ETH_ALEN);
		n++;
	}
	return n;
}

void atl1c_rs_set_parent(struct net_device *dev, struct device *parent)
{
	SET_NETDEV_DEV(dev, parent);
}

/* priv_flags is a bitfield: the station address may change while the interface runs. */
void atl1c_rs_set_live_addr_change(struct net_device *dev)
{
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
}

unsigned int atl1c_rs_rx_flags(struct net_device *dev)
{
	return (dev->flags & IFF_PROMISC ? 1 : 0) | (dev->flags & IFF_ALLMULTI ? 2 : 0);
}

void atl1c_rs_dma_rmb(void)
{
	dma_rmb();
}

int atl1c_rs_xmit_more(void)
{
	return netdev_xmit_more();
}

void atl1c_rs_set_mtu(struct net_device *dev, unsigned int mtu)
{
	WRITE_ONCE(dev->mtu, mtu);
}

void atl1c_rs_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info, const char *driver)
{
	strscpy(info->driver, driver, sizeof(info->driver));
	strscpy(info->bus_info, dev_name(dev->dev.parent), sizeof(info->bus_info));
}

void atl1c_rs_set_wakeup(struct net_device *dev, bool enable)
{
	device_set_wakeup_enable(dev->dev.parent, enable);
}

int atl1c_rs_txq_maybe_stop(struct netdev_queue *txq, unsigned int (*avail)(const void *),
			    const void *ctx, unsigned int stop_thrs, unsigned int start_thrs)
{
	return netif_txq_maybe_stop(txq, avail(ctx), stop_thrs, start_thrs);
}

int atl1c_rs_txq_completed_wake(struct netdev_queue *txq, unsigned int pkts, unsigned int bytes,
				unsigned int (*avail)(const void *), const void *ctx,
				unsigned int start_thrs)
{
	/* Do not wake the queue while the link is down (the C driver's rule too). */
	return __netif_txq_completed_wake(txq, pkts, bytes, avail(ctx), start_thrs,
					  !netif_carrier_ok(txq->dev));
}

void atl1c_rs_rx_deliver(struct napi_struct *napi, struct sk_buff *skb, struct net_device *dev,
			 u16 queue)
{
	skb->protocol = eth_type_trans(skb, dev);
	skb_record_rx_queue(skb, queue);
	napi_gro_receive(napi, skb);
}

void atl1c_rs_bh_disable(void)
{
	local_bh_disable();
}

void atl1c_rs_bh_enable(void)
{
	local_bh_enable();
}

/*
 * INIT_WORK gives each call site its own lockdep class: the task (which takes RTNL) and the
 * DIM work (cancelled under RTNL) must not share one, or lockdep sees RTNL -> work -> RTNL.
 */
void atl1c_rs_init_task_work(struct work_struct *w, void (*fn)(struct work_struct *))
{
	INIT_WORK(w, fn);
}

void atl1c_rs_init_dim_work(struct work_struct *w, void (*fn)(struct work_struct *))
{
	INIT_WORK(w, fn);
}

int atl1c_rs_schedule_work(struct work_struct *w)
{
	return schedule_work(w);
}

void atl1c_rs_rtnl_lock(void)
{
	rtnl_lock();
}

void atl1c_rs_rtnl_unlock(void)
{
	rtnl_unlock();
}

/* Headroom of an rx buffer, before the bytes the card writes. */
#define ATL1C_RS_RX_HEADROOM (NET_SKB_PAD + NET_IP_ALIGN)

/* What one rx buffer of buf_len bytes takes with its headroom and skb_shared_info. */
static u32 atl1c_rs_rx_truesize(u32 buf_len)
{
	return SKB_DATA_ALIGN(ATL1C_RS_RX_HEADROOM + buf_len) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

int atl1c_rs_rx_pool_create(struct device *dev, struct net_device *netdev, u32 count,
			    u32 buf_len, struct page_pool **pool)
{
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size = count,
		.nid = dev_to_node(dev),
		.dev = dev,
		.netdev = netdev,
		.dma_dir = DMA_FROM_DEVICE,
	};
	struct page_pool *p;

	if (!buf_len || buf_len > SZ_64K)
		return -EINVAL;
	pp.order = get_order(atl1c_rs_rx_truesize(buf_len));
	/* Recycled pages are synced for the device whole: fragments lie anywhere in them. */
	pp.max_len = PAGE_SIZE << pp.order;
	p = page_pool_create(&pp);
	if (IS_ERR(p))
		return PTR_ERR(p);
	*pool = p;
	return 0;
}

struct page *atl1c_rs_rx_page_alloc(struct page_pool *pool, u32 buf_len, u32 *offset,
				    u32 *truesize, dma_addr_t *addr)
{
	gfp_t gfp = GFP_ATOMIC | __GFP_NOWARN;
	unsigned int off, size = atl1c_rs_rx_truesize(buf_len);
	struct page *page;

	if (dma_get_mask(pool->p.dev) <= DMA_BIT_MASK(32))
		gfp |= GFP_DMA32;
	page = page_pool_alloc(pool, &off, &size, gfp);
	if (unlikely(!page))
		return NULL;
	*offset = off;
	*truesize = size;
	*addr = page_pool_get_dma_addr(page) + off + ATL1C_RS_RX_HEADROOM;
	return page;
}

struct sk_buff *atl1c_rs_rx_page_build_skb(struct page_pool *pool, struct page *page,
					   u32 offset, u32 truesize, u32 sync_len, u32 len)
{
	void *va = page_address(page) + offset;
	struct sk_buff *skb;

	page_pool_dma_sync_for_cpu(pool, page, offset + ATL1C_RS_RX_HEADROOM, sync_len);
	net_prefetch(va + ATL1C_RS_RX_HEADROOM);
	skb = in_softirq() ? napi_build_skb(va, truesize) : build_skb(va, truesize);
	if (unlikely(!skb)) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	skb_reserve(skb, ATL1C_RS_RX_HEADROOM);
	__skb_put(skb, len);
	return skb;
}

void atl1c_rs_rx_page_free(struct page_pool *pool, struct page *page)
{
	page_pool_put_full_page(pool, page, false);
}

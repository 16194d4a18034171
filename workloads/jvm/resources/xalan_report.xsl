<?xml version="1.0" encoding="UTF-8"?>
<!-- The xalan workload's stylesheet: an auction site's catalogue (XMark-like
     input made by XalanInput) to an HTML report.  Keys, Muenchian grouping,
     sorting, numbering, number formatting, string functions and a recursive
     template. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="html" encoding="UTF-8" indent="yes"/>
  <xsl:key name="person" match="person" use="@id"/>
  <xsl:key name="by-category" match="item" use="@category"/>
  <xsl:key name="bids-of" match="bid" use="@person"/>

  <xsl:template match="/site">
    <html>
      <head><title>Catalogue <xsl:value-of select="@name"/></title></head>
      <body>
        <h1>Catalogue <xsl:value-of select="translate(@name, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')"/></h1>
        <p>
          <xsl:value-of select="count(items/item)"/> items,
          <xsl:value-of select="count(people/person)"/> people,
          <xsl:value-of select="count(auctions/auction/bid)"/> bids worth
          <xsl:value-of select="format-number(sum(auctions/auction/bid/@amount), '#,##0.00')"/>.
        </p>
        <!-- one section per category (Muenchian grouping), items by price -->
        <xsl:for-each select="items/item[generate-id() = generate-id(key('by-category', @category)[1])]">
          <xsl:sort select="@category"/>
          <xsl:variable name="members" select="key('by-category', @category)"/>
          <h2><xsl:value-of select="@category"/> (<xsl:value-of select="count($members)"/>)</h2>
          <table>
            <tr><th>#</th><th>item</th><th>price</th><th>seller</th><th>words</th></tr>
            <xsl:for-each select="$members">
              <xsl:sort select="@price" data-type="number" order="descending"/>
              <xsl:sort select="name"/>
              <tr class="{substring('oddeven', 1 + 3 * (position() mod 2), 4 - (position() mod 2))}">
                <td><xsl:number value="position()" format="i"/></td>
                <td><xsl:value-of select="concat(name, ' [', @id, ']')"/></td>
                <td align="right"><xsl:value-of select="format-number(@price, '0.00')"/></td>
                <td><xsl:value-of select="key('person', @seller)/name"/></td>
                <td><xsl:call-template name="words"><xsl:with-param name="text" select="normalize-space(description)"/></xsl:call-template></td>
              </tr>
            </xsl:for-each>
          </table>
        </xsl:for-each>
        <h2>Bidders</h2>
        <ul>
          <xsl:for-each select="people/person[key('bids-of', @id)]">
            <xsl:sort select="sum(key('bids-of', @id)/@amount)" data-type="number" order="descending"/>
            <xsl:sort select="@id"/>
            <xsl:if test="position() &lt;= 50">
              <li>
                <xsl:value-of select="name"/> (<xsl:value-of select="substring-before(email, '@')"/>):
                <xsl:value-of select="count(key('bids-of', @id))"/> bids,
                <xsl:value-of select="format-number(sum(key('bids-of', @id)/@amount), '#,##0.00')"/>
                <xsl:if test="contains(profile/@interests, 'rare')"> *</xsl:if>
              </li>
            </xsl:if>
          </xsl:for-each>
        </ul>
        <h2>Auctions</h2>
        <xsl:apply-templates select="auctions/auction">
          <xsl:sort select="count(bid)" data-type="number" order="descending"/>
          <xsl:sort select="@id"/>
        </xsl:apply-templates>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="auction">
    <div id="{@id}">
      <b><xsl:value-of select="id(@item)/name"/></b>
      <xsl:text> from </xsl:text><xsl:value-of select="format-number(@start, '0.00')"/>
      <xsl:text>, highest </xsl:text>
      <xsl:for-each select="bid">
        <xsl:sort select="@amount" data-type="number" order="descending"/>
        <xsl:if test="position() = 1"><xsl:value-of select="format-number(@amount, '0.00')"/> by <xsl:value-of select="key('person', @person)/name"/></xsl:if>
      </xsl:for-each>
    </div>
  </xsl:template>

  <!-- the number of words of a text, counted recursively -->
  <xsl:template name="words">
    <xsl:param name="text"/>
    <xsl:param name="count" select="0"/>
    <xsl:choose>
      <xsl:when test="contains($text, ' ')">
        <xsl:call-template name="words">
          <xsl:with-param name="text" select="substring-after($text, ' ')"/>
          <xsl:with-param name="count" select="$count + 1"/>
        </xsl:call-template>
      </xsl:when>
      <xsl:otherwise><xsl:value-of select="$count + 1"/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>
</xsl:stylesheet>
